"""Authoring: what turns the instructor's tree into a course (no submitted code runs here).

regions.py   the solution regions the release cuts out of the package
release.py   the student release and the solutions, written from one source tree
probe.py     the pytest plugin verify runs the tests with, against the stubbed package
verify.py    the gates a tree passes before it is released
"""
