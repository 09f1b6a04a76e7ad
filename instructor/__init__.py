"""The instructor's tooling for the tenxor course: the student release, the gates that prove
every exercise is graded, and grading. It is part of the instructor's tree only."""
