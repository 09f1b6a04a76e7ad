"""The sandbox: everything that creates, confines, talks to or counts a worker, the process
that runs a submission's code. Grading reaches it only through `interface`; this file
imports nothing, because the worker loads it before it confines itself.

Who runs what:

    worker.py        THE WORKER: runs the submission's code, confined, as a user of its own
    os_calls.py      becoming a user, dying with a parent: the OS calls root and worker share
    plain_data.py    what crosses the worker's pipes: inert data, decoded as data only
    protections.py   the named protections of each sandbox mode, and who takes each
    reachable.py     imports that keep working after a process becomes another user
    launcher.py      ROOT: starts, stops and kills workers; never reads what they send
    worker_group.py  ROOT: the cgroup (or process tree) that counts a worker and all it starts
    leftovers.py     ROOT: removes what a worker's user left behind (files, IPC objects)
    allowlist.py     ROOT: the worker's file system in bubblewrap, built from an allowlist
    exposure.py      where there is no allowlist: checks, as the worker's user, what it reads
    judge_side.py    THE JUDGE (no privilege): its end of a worker's pipes, the clock, limits
    interface.py     what grading calls
"""
