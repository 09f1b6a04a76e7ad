"""The `tenxor` shell command's way in (tenxor_shell.command): it imports the course's tools,
which import the package a learner is writing, so it first makes sure that package imports."""
