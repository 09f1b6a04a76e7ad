"""The judge's side of the sandbox: start a worker for a submission, call the submission's
functions in it, and keep it within its limits.

A call sends its arguments as plain data and waits for plain data back, serving the worker's
calls of judge functions meanwhile. Everything the worker sends is decoded as data only
(instructor.sandbox.plain_data), within a byte budget per answer. Limits hold per call (CPU time; a
wall-clock time for a call that sleeps) and per exercise (a few calls that crash, hang or run
out of time, and budgets of CPU time and of time by the clock; then its further calls fail at
once), so one exercise's trouble costs nobody else: the start-up of the worker that replaces
one a call stopped is charged to that call's exercise, with a strike. So, per judge process,
an exercise stops at most `strikes` + 1 workers and costs at most exercise_cpu_seconds +
2 * (call_cpu_seconds + 3 * TICK_SECONDS) of CPU time and exercise_wall_seconds +
2 * call_wall_seconds by the clock: the last call admitted within its budgets, and the
start-up of the worker that replaces the one it stopped. Grading's own starts (the first
worker, and the first for the hidden tests) cost each judge process at most
2 * call_wall_seconds more, charged to no exercise.

Many calls of one function (a test's list of cases, Sandbox.each) go to the worker a window
at a time, as many as its command pipe holds, and it answers them in turn without waiting on
the judge: the answers, the limits per call, the strikes and the budgets are those of the same
calls made one at a time. Each call's limits count from the answer before it; the worker is
stopped once the exercise has used up a budget; and what a call costs is charged only if the
caller comes to its answer (one that stops at an earlier wrong answer never pays for a crash
after it). A window goes as one batch, a message each way, wherever that gives the answers
the calls made one at a time give (Sandbox.batch); a batch that does not is cut short and its
calls made one at a time, as are the exercise's later ones: once per exercise of a
submission, at most BATCH_SECONDS by the clock more, charged to nobody.

CPU time and memory are the kernel's figures for the worker and every process it started
(instructor.sandbox.worker_group), never the worker's own. Workers are started and killed by a
launcher (instructor.sandbox.launcher), which keeps root when the judge gives it up; this side only
talks to them. A worker that dies, hangs or talks out of form is killed with everything it
started, and the next call starts a new one.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from instructor.sandbox import plain_data
from instructor.sandbox.launcher import Launcher, LauncherClient, SandboxConfig
from instructor.sandbox.plain_data import (
    HEADER,
    Call,
    Decoder,
    Encoder,
    Kinds,
    UnreadableData,
    raised,
)
from instructor.sandbox.worker_group import meter
from tenxor.course.engine import exit_in_words

TICK_SECONDS = 1.0  # how often a waiting judge reads the worker's CPU time
# How often, at most, finished calls read it: all of it is charged to the exercise of the
# call that reads it, so an exercise may pay for up to this much time of the one before.
CHARGE_SECONDS = 0.005
# The most one read of the worker's pipe asks for (what a pipe holds): a read asks for the rest
# of the message it waits for, no more, since a read allocates all it asks for.
READ_BYTES = 1 << 16
# The calls Sandbox.each sends at once, in bytes of messages: well within what a pipe holds,
# so that sending never waits on a worker that is itself waiting to send its answers.
WINDOW_BYTES = 16 * 1024
# The longest a batch of calls (Sandbox.batch) may take by the clock before it is cut short.
BATCH_SECONDS = 2.0


class SandboxFailure(Exception):
    """The worker crashed, hung, or broke the protocol during a call."""


class LimitReached(Exception):
    """A call of an exercise ran out of time, or the exercise used up what it may use."""


class AnswerTooLarge(SandboxFailure, LimitReached):
    """The worker's answer is larger than its byte budget: the worker is killed."""


@dataclass(frozen=True)
class Raising:
    """An answer that is an error to raise in the judge."""

    error: BaseException


@dataclass(frozen=True)
class Ended:
    """The call of a window at which the worker stopped (it crashed, hung or broke the
    protocol; or the exercise used up its budgets): the error its caller gets."""

    error: SandboxFailure | LimitReached


@dataclass
class Account:
    """What one exercise's calls have cost so far."""

    strikes: list[str] = field(default_factory=list)
    cpu: float = 0.0
    wall: float = 0.0


class Sandbox:
    """One worker at a time for one submission, and the calls the judge makes into it. The
    worker is started and killed by a launcher (instructor.sandbox.launcher); this side only talks
    to it, over two pipes, and reads its CPU time as the kernel counts it."""

    def __init__(
        self,
        config: SandboxConfig,
        kinds: Kinds | None,
        launcher: Launcher | LauncherClient | None = None,
    ) -> None:
        """`kinds`: the judge's tensor classes (None when only imports are tried);
        `launcher`: who starts the workers (by default one in this process)."""
        self.config, self.limits = config, config.limits
        self.kinds = kinds
        self.launcher = launcher or Launcher(config)
        self.pid: int | None = None  # the running worker's
        self.commands = self.replies = -1
        self.buffer = bytearray()
        self.meter = None  # what reads the CPU time of the worker and all it started
        self.accounts: dict[str, Account] = {}
        self.functions: list[Any] = []  # the judge's functions the worker may call back
        # What the worker's exercise functions stand for now: (module, function, the judge's
        # function to call instead) each, the first `kept` of `functions` once sent.
        self.bindings: list[tuple[str, str, Any]] = []
        self.kept = 0
        self.bindings_sent = False
        self.target: tuple[str, str] | None = None  # the function of the outermost call
        self.serving: bool | None = None  # the worker's tests: hidden ones, public ones, none yet
        self.owed: str | None = None  # the exercise whose call stopped the last worker
        self.depth = 0
        self.call_started = 0.0  # when the running call (the outermost) began
        self.call_cpu = 0.0  # the worker's CPU time when the judge's outermost call began
        self.counted = self.read_at = 0.0  # the CPU time charged so far, and when read
        self.broken: str | None = None  # why the submission does not import, once known
        self.window_bytes = 0  # the calls each() sends at once, in bytes
        self.unbatched: set[str] = set()  # exercises whose calls no longer go in batches

    # -- the worker's life --------------------------------------------------------------------

    def start(self) -> str | None:
        """Start a worker and let it import the submission; why that failed, if it did."""
        self.stop()
        try:
            self.pid, self.commands, self.replies, spec = self.launcher.start()
        except OSError as error:
            return f"the worker could not be started: {error}"
        self.buffer, self.meter = bytearray(), meter(spec)
        self.window_bytes = min(WINDOW_BYTES, pipe_capacity(self.commands))
        self.counted, self.read_at = self.meter.cpu_seconds(), time.monotonic()
        self.call_cpu = self.counted  # importing the submission counts as a call
        os.set_blocking(self.replies, False)
        try:
            ready = self.receive(time.monotonic() + 60.0, None)
            if ready != ["ready"]:
                raise SandboxFailure(f"the worker could not confine itself: {ready!r}"[:300])
            imported = self.receive(self.deadline(), time.monotonic())
        except SandboxFailure as failure:
            self.stop()
            return f"importing it stopped the worker: {failure}"
        if type(imported) is not list or len(imported) != 2 or imported[0] != "imported":
            self.stop()
            return "importing it did not end with an answer the judge can read"
        if imported[1] is not None:
            self.stop()
            error = imported[1]
            if type(error) is not list or len(error) != 2 or not all(type(p) is str for p in error):
                return "importing it raised an error the judge cannot read"
            name, message = error
            return (
                f"importing it raised {name}: {message}"
                if message
                else f"importing it raised {name}"
            )
        return None

    def serve(self, hidden: bool) -> None:
        """Make the worker one that serves hidden tests, or public ones: a worker that served
        the other kind is stopped first (the next call starts a new one)."""
        if self.depth == 0 and self.serving is not None and self.serving != hidden:
            self.stop()
        self.serving = hidden

    def stop(self) -> None:
        """Have the worker killed, and whatever it started."""
        for fd in (self.commands, self.replies):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.commands = self.replies = -1
        if self.meter is not None:
            self.meter.close()
            self.meter = None
        self.serving, self.bindings_sent = None, False
        if self.pid is not None:
            self.pid = None
            with contextlib.suppress(OSError):  # a launcher that has ended took it along
                self.launcher.stop()

    def close(self) -> None:
        """Stop the worker, and the launcher with it."""
        self.stop()
        self.launcher.close()

    def deadline(self) -> float:
        return time.monotonic() + self.limits.call_wall_seconds

    # -- messages -----------------------------------------------------------------------------

    def send(self, data: Any) -> None:
        self.send_bytes(plain_data.dumps(data))

    def send_bytes(self, message: bytes) -> None:
        """Write messages, made by plain_data.dumps, to the worker."""
        try:
            while message:
                message = message[os.write(self.commands, message) :]
        except OSError as error:
            raise SandboxFailure(f"the worker stopped listening ({error.strerror})") from None

    def fill(self, size: int, deadline: float, started: float | None) -> None:
        """Read until the buffer holds `size` bytes, watching the call's limits at every read:
        its time by the clock, and (for a call, `started`) its CPU time, past which the worker
        is asked to stop (it raises inside the call) and killed if it goes on."""
        checked, asked = time.monotonic(), False
        while len(self.buffer) < size:
            now = time.monotonic()
            if now > deadline:
                raise SandboxFailure(
                    f"no answer within {self.limits.call_wall_seconds:g} s: it was killed"
                )
            if started is not None and now - checked >= TICK_SECONDS:
                checked, asked = now, self.watch_cpu(asked)
            try:  # the answer is often there already
                chunk = os.read(self.replies, min(READ_BYTES, size - len(self.buffer)))
            except BlockingIOError:
                select.select([self.replies], [], [], min(TICK_SECONDS, deadline - now))
                continue
            if not chunk:  # it closed its end: it has ended, or will be made to
                raise SandboxFailure(f"the worker ended ({self.ended_in_words()})")
            self.buffer += chunk

    def watch_cpu(self, asked: bool) -> bool:
        """Ask the worker to stop a call past its CPU time (True once asked); kill it if it
        goes on regardless."""
        used = self.meter.cpu_seconds() - self.call_cpu
        if used > self.limits.call_cpu_seconds + 3 * TICK_SECONDS and asked:
            raise SandboxFailure(
                f"it used more than {self.limits.call_cpu_seconds:g} s of CPU time and would "
                "not stop: it was killed"
            )
        if used > self.limits.call_cpu_seconds and not asked:
            self.launcher.interrupt()
            return True
        return asked

    def ended_in_words(self) -> str:
        """How the worker ended, once it has: its exit, and whether memory ended it."""
        try:
            self.pid, (exit_code, over_memory) = None, self.launcher.stop(ended=True)
        except OSError:  # the launcher itself has ended, and the worker with it
            exit_code, over_memory = None, False
        code = exit_in_words(exit_code) if exit_code is not None else "it had ended"
        if over_memory:
            limit = self.limits.group_memory_mb
            return (
                f"{code}: it and the processes it started went over the memory limit ({limit} MB)"
            )
        return code

    def receive(self, deadline: float, started: float | None) -> Any:
        """The next message of the worker, as JSON data (not yet decoded)."""
        self.fill(HEADER, deadline, started)
        size = int.from_bytes(self.buffer[:HEADER], "big")
        if size > self.limits.answer_mb * 1024 * 1024:
            raise AnswerTooLarge(
                f"it sent an answer of {size / 1e6:.0f} MB, more than the "
                f"{self.limits.answer_mb} MB an answer may have: it was killed"
            )
        self.fill(HEADER + size, deadline, started)
        payload = bytes(self.buffer[HEADER : HEADER + size])
        del self.buffer[: HEADER + size]
        try:
            return plain_data.loads(payload)
        except UnreadableData as error:
            raise SandboxFailure(str(error)) from None

    # -- calls --------------------------------------------------------------------------------

    def account(self, exercise: str) -> Account:
        return self.accounts.setdefault(exercise, Account())

    def refuse(self, exercise: str, cpu: float | None = None, wall: float | None = None) -> None:
        """Fail at once when the exercise has used up what it may use (see used_up)."""
        problem = self.used_up(exercise, cpu, wall)
        if problem is not None:
            raise problem

    def used_up(
        self, exercise: str, cpu: float | None = None, wall: float | None = None
    ) -> LimitReached | None:
        """The error that refuses the exercise's next call, if it has used up what it may
        use: its strikes, or its budgets (`cpu` and `wall`: what it had spent at some
        earlier moment, if not now)."""
        account, limits = self.account(exercise), self.limits
        cpu = account.cpu if cpu is None else cpu
        wall = account.wall if wall is None else wall
        if len(account.strikes) >= limits.strikes:
            return LimitReached(
                f"not run: calls of exercise {exercise} crashed or hung the worker "
                f"{len(account.strikes)} times ({account.strikes[-1]})"
            )
        if cpu > limits.exercise_cpu_seconds:
            return LimitReached(
                f"not run: exercise {exercise} used up its {limits.exercise_cpu_seconds:g} s "
                "of CPU time"
            )
        if wall > limits.exercise_wall_seconds:
            return LimitReached(
                f"not run: exercise {exercise} used up its {limits.exercise_wall_seconds:g} s "
                "by the clock (its calls and the starts of the workers they needed)"
            )
        return None

    def call(
        self,
        exercise: str,
        target: tuple[str, str],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        stand_ins: list[tuple[str, str, Any]],
    ) -> Any:
        """Call the submission's `module.name(*args, **kwargs)` in the worker; its result."""
        account = self.accounts.get(exercise) or self.account(exercise)
        if self.depth == 0:
            self.admit(exercise, account)
        elif self.broken:
            raise SandboxFailure(f"not run: the submission does not import ({self.broken})")
        call = Call()
        message = self.call_message(call, target, args, kwargs, stand_ins)
        started = time.monotonic()
        if self.depth == 0:
            self.call_cpu, self.target = self.counted, target
            self.call_started = started
        self.depth += 1
        try:
            self.send(message)
            answer = self.outcome(call, account, started)
        except BaseException as error:  # the worker is stopped: that costs a strike
            if isinstance(error, SandboxFailure):
                account.strikes.append(str(error))
            else:  # interrupted while the worker was still at it: its state is unknown
                account.strikes.append(f"the call was cut short ({type(error).__name__})")
            self.charge(account, now=True)
            self.stop()
            self.owed = exercise  # and its replacement's start-up
            raise
        finally:
            self.depth -= 1
            account.wall += time.monotonic() - started
            if self.depth == 0:
                self.charge(account)
                self.drop_lent()
        if type(answer) is Raising:
            raise answer.error
        return answer

    def admit(self, exercise: str, account: Account) -> None:
        """Before an outermost call: fail at once where it may not run; start a worker if
        none runs."""
        if self.broken:
            raise SandboxFailure(f"not run: the submission does not import ({self.broken})")
        self.refuse(exercise)
        if self.pid is None:
            self.restart(account)
        if not self.bindings_sent:
            self.send_bindings()

    def bind(self, bindings: list[tuple[str, str, Any]]) -> None:
        """From the next outermost call on, the worker's exercise functions named in
        `bindings` (module, function, the judge's function) call the judge's function
        instead, wherever the worker's package holds them; those of the last bind() are the
        worker's own again."""
        if bindings != self.bindings:
            self.bindings, self.bindings_sent = list(bindings), False

    def send_bindings(self) -> None:
        """Tell the worker the bindings: the judge's functions in them are the only ones it
        may call back between calls, under the numbers 0, 1, ..."""
        self.functions[:] = [function for _, _, function in self.bindings]
        self.kept = len(self.functions)
        places = [[module, name, ["F", number]]
                  for number, (module, name, _) in enumerate(self.bindings)]  # fmt: skip
        self.send(["bind", places])
        self.bindings_sent = True

    def drop_lent(self) -> None:
        """Forget the judge's functions lent to the worker by a call (not the bindings)."""
        del self.functions[self.kept :]

    def call_message(
        self,
        call: Call,
        target: tuple[str, str],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        stand_ins: list[tuple[str, str, Any]],
    ) -> list[Any]:
        """The message that asks the worker for `module.name(*args, **kwargs)`."""
        encoder = Encoder(self.kinds, call, lenient=False)
        encoder.functions = self.encode_function
        return [
            "call",
            *target,
            *arguments_data(encoder, args, kwargs),
            [[module, name, encoder.encode(function)] for module, name, function in stand_ins],
        ]

    def each(
        self, exercise: str, target: tuple[str, str], cases: Iterable[tuple[Any, ...]]
    ) -> Iterator[Any]:
        """`module.name(*case)` of the submission for each of `cases`, in turn: what each
        call returned, or Raising. The calls go to the worker a window at a time (as many as
        its command pipe holds, at most WINDOW_BYTES), answered ahead of the caller; every limit
        still holds per call, and a call is charged what it costs (a strike, the start of the
        worker that replaces one it stopped) only once the caller comes to its answer, as
        if each call had been made when the caller asked for it."""
        account, pending, held = self.account(exercise), iter(cases), []
        while True:
            self.admit(exercise, account)
            self.target = target
            window = self.window(target, held, pending)
            if not window:
                return
            answers = self.batch(exercise, account, window)
            if answers is None:  # made one at a time, in a worker that is running
                self.admit(exercise, account)
                answers = self.answers(exercise, account, window)
            for number, (answer, strike, _) in enumerate(answers):
                if number > 0:  # the budgets as they stood once the call before it ended
                    self.refuse(exercise, *answers[number - 1][2])
                if strike is not None:
                    account.strikes.append(strike)
                if type(answer) is Ended:
                    if strike is not None:  # it stopped the worker: the next start is its
                        self.owed = exercise
                    raise answer.error
                yield answer

    def window(
        self, target: tuple[str, str], held: list[tuple[Any, ...]], cases: Iterator[Any]
    ) -> list[Any]:
        """The next calls, the `held` case first, then `cases`, as messages (Call, message
        bytes) each: as many as fit in the worker's command pipe, so that sending them never
        waits. A call that lends the worker a judge function (which it may call back, and
        then read the judge's answer among calls it has not started) goes alone."""
        window, size = [], 0
        while (case := held.pop() if held else next(cases, None)) is not None:
            call = Call()
            data = plain_data.dumps(self.call_message(call, target, tuple(case), {}, []))
            lends = len(self.functions) > self.kept
            if window and (lends or size + len(data) > self.window_bytes):
                self.drop_lent()  # it goes in the next window
                held.append(case)
                break
            window.append((call, data))
            size += len(data)
            if lends:
                break
        return window

    def batch(
        self, exercise: str, account: Account, window: list[Any]
    ) -> list[tuple[Any, str | None, Any]] | None:
        """The answers to a window of calls (as answers() gives them) made in one batch: the
        worker makes every call in turn and sends all their answers in one message, at a
        fraction of the cost of a message each. A batch is taken only where making its calls
        one at a time gives the same answers: it ended within BATCH_SECONDS by the clock and
        one call's CPU time, no call of it crashed, hung or used up a limit, and the
        exercise's budgets still hold once it is charged. Otherwise (None) its worker is
        stopped, nobody is charged for it or for the next worker's start, and the exercise's
        calls go one at a time from then on (a submission that keeps state from call to call
        then starts its next calls from none)."""
        if len(self.functions) > self.kept or exercise in self.unbatched or len(window) < 2:
            return None
        self.charge(account, now=True)
        begun, cpu = time.monotonic(), self.counted
        payload = b'["batch",[' + b",".join(data[HEADER:] for _, data in window) + b"]]"
        self.depth = 1
        try:
            self.send_bytes(len(payload).to_bytes(HEADER, "big") + payload)
            self.call_started = begun  # the limits of iterators lent in calls back
            answers = self.batch_answers(window, self.reply(begun + BATCH_SECONDS, None))
        except SandboxFailure:
            answers = None
        except BaseException:  # interrupted while the worker was at it: grading is ending
            self.stop()
            raise
        finally:
            self.depth = 0
        used = self.meter.cpu_seconds() - cpu if self.meter is not None else 0.0
        took, limits = time.monotonic() - begun, self.limits
        if (
            answers is not None
            and used <= limits.call_cpu_seconds
            and account.cpu + used <= limits.exercise_cpu_seconds
            and account.wall + took <= limits.exercise_wall_seconds
        ):
            account.cpu, account.wall = account.cpu + used, account.wall + took
            self.counted, self.read_at = cpu + used, time.monotonic()
            return [(answer, None, (account.cpu, account.wall)) for answer in answers]
        self.stop()
        self.unbatched.add(exercise)
        return None

    def batch_answers(self, window: list[Any], message: Any) -> list[Any] | None:
        """What each call of a batch gave (its result, or Raising), from the worker's message;
        None if the message is not a batch's answers, or a call of it cost a strike."""
        if type(message) is not list or len(message) != 2 or message[0] != "batch":
            return None
        outcomes = message[1]
        if type(outcomes) is not list or len(outcomes) != len(window):
            return None
        answers = []
        for (call, _), outcome in zip(window, outcomes):
            if type(outcome) is not list or not outcome:
                return None
            answer, strike = self.answer_of(call, outcome)
            if strike is not None:
                return None
            answers.append(answer)
        return answers

    def answers(
        self, exercise: str, account: Account, window: list[Any]
    ) -> list[tuple[Any, str | None, Any]]:
        """Send a window of calls and read every answer: (what the call gave or Ended, the
        strike it costs, the exercise's (CPU, wall) spent when it came) each; nothing after
        an Ended. Each call's limits count from the answer before it; once the exercise has
        used up its budgets, the worker is stopped before it answers the calls left (which
        would not have run one at a time), and the next is Ended without a strike."""
        answers: list[tuple[Any, str | None, Any]] = []
        begun = time.monotonic()
        self.depth = 1
        try:
            ahead = not self.kept  # a worker that may call back must read each answer alone
            if ahead:
                self.send_bytes(b"".join(data for _, data in window))
            for call, data in window:
                if not ahead:
                    self.send_bytes(data)
                started = time.monotonic()
                self.call_cpu, self.call_started = self.counted, started
                message = self.reply(started + self.limits.call_wall_seconds, started)
                answer, strike = self.answer_of(call, message)
                self.charge(account)
                wall = account.wall + time.monotonic() - begun
                answers.append((answer, strike, (account.cpu, wall)))
                problem = self.used_up(exercise, account.cpu, wall)
                if problem is not None and len(answers) < len(window):
                    self.stop()
                    answers.append((Ended(problem), None, (account.cpu, wall)))
                    break
        except BaseException as error:  # the worker is stopped at this call
            self.charge(account, now=True)
            self.stop()
            if not isinstance(error, SandboxFailure):
                raise  # interrupted while the worker was at it: grading is ending
            wall = account.wall + time.monotonic() - begun
            answers.append((Ended(error), str(error), (account.cpu, wall)))
        finally:
            self.depth = 0
            account.wall += time.monotonic() - begun
            self.drop_lent()
        return answers

    def restart(self, caller: Account) -> None:
        """Start a new worker for a call of `caller`'s exercise. Its start-up (the clock's
        time, and the CPU time of importing the submission) is charged to the exercise whose
        call stopped the last worker, which also bears a strike if the start fails; a start
        that grading chose (the first, or for the hidden tests) is charged to nobody."""
        payer = self.account(self.owed) if self.owed else None
        self.owed, begun = None, time.monotonic()
        problem = self.start()
        if payer is not None:
            payer.wall += time.monotonic() - begun
            self.charge(payer, now=True)
        if problem:
            (payer or caller).strikes.append(problem)
            raise SandboxFailure(problem)

    def charge(self, account: Account, now: bool = False) -> None:
        """Charge the CPU time the worker and all it started used since the last reading to
        `account`; read at most every CHARGE_SECONDS, unless `now`."""
        if self.meter is not None and (now or time.monotonic() - self.read_at >= CHARGE_SECONDS):
            cpu = self.meter.cpu_seconds()
            account.cpu += cpu - self.counted
            self.counted, self.read_at = cpu, time.monotonic()

    def outcome(self, call: Call, account: Account, started: float) -> Any:
        """Wait for the worker's answer to a call, serving its calls back meanwhile: the
        result, or Raising(the error to raise)."""
        message = self.reply(started + self.limits.call_wall_seconds, started)
        answer, strike = self.answer_of(call, message)
        if strike is not None:
            account.strikes.append(strike)
        return answer

    def answer_of(self, call: Call, message: list[Any]) -> tuple[Any, str | None]:
        """What the worker's answer to a call gives (the result, or Raising(the error to
        raise)), and the strike it costs, if any."""
        kind = message[0]
        if kind == "limit":
            limit = f"the call used more than {self.limits.call_cpu_seconds:g} s of CPU time"
            return Raising(LimitReached(limit)), "it ran out of CPU time"
        try:
            if kind == "raise" and len(message) == 2:
                error = raised(message[1])
                if type(error) is MemoryError:  # it may well do so again, and slowly
                    return Raising(error), "it went over the memory limit"
                return Raising(error), None
            if kind == "ret" and len(message) == 3:
                return self.result(call, message[1], message[2]), None
        except UnreadableData as error:
            return Raising(error), None
        raise SandboxFailure(f"the worker sent a message of unknown kind {kind!r}"[:200])

    def reply(self, deadline: float, started: float | None) -> list[Any]:
        """The worker's next message that is not a call back, serving its calls back until
        it comes."""
        while True:
            message = self.receive(deadline, started)
            if type(message) is not list or not message:
                raise SandboxFailure("the worker sent something that is not a message")
            if message[0] != "cb":
                return message
            self.call_back(message)

    def result(self, call: Call, value: Any, changes: Any) -> Any:
        """Decode a result, first applying what the call changed in its arguments: as data
        only, like everything the worker sends."""
        decoder = Decoder(self.kinds, call, register=False, data_only=True)
        if type(changes) is not list:
            raise UnreadableData("the changes to the arguments must be a list")
        updates = []
        for change in changes:
            if type(change) is not list or len(change) != 2 or type(change[0]) is not int:
                raise UnreadableData("a change must be [argument number, new contents]")
            original = decoder.build_reference([change[0]], 0)
            contents = Decoder(self.kinds, Call(), register=False, data_only=True)
            updates.append((original, contents.decode(change[1])))
        for original, new in updates:
            update_in_place(original, new)
        return decoder.decode(value)

    def call_back(self, message: list[Any]) -> None:
        """Run a judge function the worker called, and send back what it gave."""
        if len(message) != 4 or type(message[1]) is not int:
            raise SandboxFailure("the worker called back with a malformed message")
        number = message[1]
        if not 0 <= number < len(self.functions):
            raise SandboxFailure(f"the worker called back an unknown function {number}")
        lent = Lent(self)
        decoder = Decoder(  # numbered as the worker numbered them: a Storage shared is shared
            self.kinds,
            Call(),
            True,
            data_only=True,
            iterators=lent.iterator,
            procedures=lent.function,
        )
        try:
            args, kwargs = decoder.decode(message[2]), decoder.decode(message[3])
        except UnreadableData as error:
            self.send(["raise", ["TypeError", f"grading cannot read the arguments: {error}"]])
            return
        if type(args) is not tuple or type(kwargs) is not dict:
            raise SandboxFailure("the worker called back without args and kwargs")
        try:
            value = self.functions[number](*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - the judge's function raised: pass it on
            self.send(["raise", plain_data.error_data(error)])
            return
        finally:
            lent.open = False
        encoder = Encoder(self.kinds, Call(), lenient=False)
        encoder.functions = self.encode_function
        self.send(["ret", encoder.encode(value)])

    def call_lent(self, number: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Call the function the worker lent as `number` (in the arguments of a call back)
        with `args` and `kwargs`, serving its calls back meanwhile: what it returned, as data
        only. A worker that breaks off (or runs out of time) meanwhile is stopped, and the
        call fails."""
        call = Call()
        encoder = Encoder(self.kinds, call, lenient=False)
        encoder.functions = self.encode_function
        self.send(["fn", number, *arguments_data(encoder, args, kwargs)])
        started = self.call_started  # the running call's limits hold while it runs
        try:
            message = self.reply(started + self.limits.call_wall_seconds, started)
            answer, strike = self.answer_of(call, message)
        except SandboxFailure:
            self.stop()
            raise
        if strike is not None:
            self.stop()
            raise SandboxFailure(f"a function the worker lent stopped it: {strike}")
        if type(answer) is Raising:
            raise answer.error
        return answer

    def next_item(self, number: int) -> Any:
        """The next item of the iterator the worker lent as `number`, serving its calls back
        while it makes it; StopIteration at its end. A worker that breaks off (or runs out
        of time) meanwhile is stopped, and the call fails."""
        self.send(["next", number])
        started = self.call_started  # the running call's limits hold while it makes items
        try:
            message = self.reply(started + self.limits.call_wall_seconds, started)
        except SandboxFailure:
            self.stop()
            raise
        kind = message[0]
        try:
            if kind == "item" and len(message) == 2:
                return Decoder(self.kinds, Call(), False, data_only=True).decode(message[1])
            if kind == "stop" and len(message) == 1:
                raise StopIteration
            if kind == "raise" and len(message) == 2:
                raise raised(message[1])
        except UnreadableData as error:
            raise TypeError(f"grading cannot read the item: {error}") from None
        self.stop()
        why = "ran out of CPU time" if kind == "limit" else f"sent {str(kind)[:40]!r}"
        raise SandboxFailure(f"the worker {why} while grading took items of its iterator")

    def encode_function(self, function: Any) -> list[Any]:
        """A judge function as plain data: the exercise of the call (the submission's function
        of it), a function found by name, what a factory made, or else a number the worker
        calls back (another exercise's function too: the judge runs the instructor's)."""
        target = getattr(function, "sandbox_target", None)
        if target is not None and target == self.target:
            return ["X", *target]
        named = None if target is not None else plain_data.name_of(function)
        if named is not None:
            return ["N", *named]
        made = plain_data.factory_of(function)
        if made is not None:
            encoder = Encoder(self.kinds, Call(), lenient=False)
            encoder.functions = self.encode_function
            return ["M", made[0], made[1], encoder.encode(made[2])]
        self.functions.append(function)
        return ["F", len(self.functions) - 1]


class Lent:
    """The iterators and functions the worker lends one call back of a judge function: the
    judge takes their items, and calls them in the worker, while that function runs, and
    never after."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox, self.open = sandbox, True

    def iterator(self, number: int) -> Iterator[Any]:
        """The worker's iterator `number`, as the judge function iterates it."""
        while True:
            if not self.open:
                raise RuntimeError("an iterator of the worker is read only while its call runs")
            try:
                item = self.sandbox.next_item(number)
            except StopIteration:
                return
            yield item

    def function(self, number: int) -> Callable[..., Any]:
        """The worker's function `number`, as the judge function calls it."""

        def call_in_worker(*args: Any, **kwargs: Any) -> Any:
            if not self.open:
                raise RuntimeError("a function of the worker is called only while its call runs")
            return self.sandbox.call_lent(number, args, kwargs)

        return call_in_worker


def arguments_data(encoder: Encoder, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """A call's arguments and keyword arguments as plain data, as the worker reads them."""
    return [
        encoder.encode(args),
        ["d", *[[key, encoder.encode(value)] for key, value in kwargs.items()]],
    ]


def pipe_capacity(descriptor: int) -> int:
    """How many bytes the pipe `descriptor` holds (a page, the least a pipe may hold, where
    that cannot be asked)."""
    try:
        return fcntl.fcntl(descriptor, fcntl.F_GETPIPE_SZ)
    except (OSError, AttributeError):
        return 4096


def update_in_place(original: Any, new: Any) -> None:
    """Give a list, dict or Storage of the judge's the contents the worker's copy ended with."""
    if type(original) is list and type(new) is list:
        original[:] = new
    elif type(original) is dict and type(new) is dict:
        original.clear()
        original.update(new)
    elif type(new) is type(original) and hasattr(original, "data"):  # a Storage
        if new.dtype is not original.dtype:
            raise UnreadableData("a call changed the dtype of a Storage it was given")
        original.data[:] = new.data
    else:
        raise UnreadableData(f"a {type(original).__name__} argument came back as another kind")
