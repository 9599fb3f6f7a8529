//! Time accounting: what a game's [`TimePolicy`] makes of when a bot
//! answered, as pure code (no clock is read here; the engine passes
//! durations in).
//!
//! One [`Clock`] per bot, for the whole match. Every *exchange* (the
//! start-up exchange of a bot that speaks first, then each request) goes
//! through it:
//!
//! 1. [`Clock::begin`] gives the exchange's [`Allowance`]: the move's limit,
//!    plus the first-move allowance for the bot's *first* exchange only (a
//!    bot that never answers gets it once, not on every move), plus, under a
//!    soft limit, the hard limit past which the engine stops waiting.
//! 2. Lines from a long-lived bot are matched to requests in order:
//!    [`Clock::line`] says whether a line is the pending request's answer or
//!    the late answer to an earlier, timed-out request (which is discarded,
//!    whenever it arrives), and [`Clock::before_request`] sorts the lines
//!    that were waiting when a request is sent.
//! 3. [`Clock::judge`] decides the exchange from what was [`Seen`] and how
//!    long it took: on time, late but counted (soft limits), timed out (with
//!    the game's consequence: no move, loss or forfeit, or frozen for good
//!    after `freeze_after` consecutive timeouts), or gone.
//!
//! # Time banks and start-up allowances
//!
//! A game may give each bot a **time bank** over the match
//! ([`TimePolicy::bank`]): every move's limit is its own plus what is left
//! of the bank, and a move on time past its own limit draws the excess
//! from the bank; a move over both (timed out, or late under a soft limit)
//! empties it. And a **start-up allowance per process**
//! ([`TimePolicy::startup`], or the game's per language: [`Clock::startup`])
//! is added to every move of a program started per turn, and to the first
//! move of a long-lived one.
//!
//! An answer seen exactly at the limit is on time; one seen after it is
//! late, even if the engine noticed it in the same wake-up as the deadline.
//!
//! # The machine's time is not the bot's
//!
//! A move's limit is the bot's own time. What the bot spent *waiting for a
//! CPU* (runnable, but the cores were taken by other processes on the host
//! or by another box), and what the engine spent waiting for one while it
//! should have been reading the answer ([`Wait::run_queue`], both measured
//! from the kernel's per-thread run-queue counts), is the machine's, and is
//! not charged. (The engine waits at a real-time priority, but a kernel
//! built without preemption, `PREEMPT_NONE`, lets it wait for the current
//! task to leave the kernel, up to a scheduler tick: 4 to 40 ms a turn was
//! seen on this project's 2-core VMs at load 10.)
//!
//! * **uncharged** = min(run-queue wait, wall − CPU, the bound). `wall − CPU`
//!   caps it because a bot that kept a core busy all the move waited for
//!   nothing that was not its own (its threads queue behind each other);
//!   the bound ([`Allowance::max_uncharged`], the move's own limit) keeps a
//!   match from stretching without end on a machine that never frees up.
//! * **charged** = wall − uncharged, which is never below the CPU the bot
//!   used. It is judged against the limit exactly as wall time was.
//! * The engine's deadline moves with it: it gives up at the limit plus the
//!   uncharged wait so far ([`Allowance::deadline`]).
//! * **A stopped machine.** Time the engine's own thread was stopped
//!   ([`Wait::stalled`]: a paused VM, a stopped runner, CPUs the hypervisor
//!   took) is the machine's too, and forgiven the same way, within the
//!   same bound.
//! * **The machine at fault.** When the move would be on time with all its
//!   wait uncharged but is over the limit because the wait passed the bound
//!   (the host is overloaded, or was stopped), the decision is
//!   [`Decision::HostOverloaded`]: nobody is charged, and the engine ends
//!   the match as the machine's fault instead of scoring it.
//! * A bot that is slow with the CPU free is charged in full, as always.

use std::time::Duration;

use koth_games::{OnTimeout, TimePolicy};

/// How long an exchange may take, from the moment its clock started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allowance {
    /// Answers after this are late.
    pub limit: Duration,
    /// The engine stops waiting here (= `limit` unless the limit is soft).
    pub give_up: Duration,
    /// The most waiting for a CPU that is not charged (the deadline moves
    /// by at most this much).
    pub max_uncharged: Duration,
}

/// What the bot's box did with the CPU during an exchange, as measured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wait {
    /// Time its threads were runnable but waiting for a CPU, and time the
    /// engine's own thread was (an engine waiting for a CPU reads the
    /// answer that much later: the wall time it measures grows by it).
    pub run_queue: Duration,
    /// Time the engine's thread was stopped (`koth_sandbox::cpu_wait::Stopped`:
    /// neither running, nor waiting for a CPU, nor asleep where it chose
    /// to be): a paused VM, a stopped runner, a hypervisor that took the
    /// machine's CPUs. Nothing of the match could be seen meanwhile.
    pub stalled: Duration,
    /// CPU time it used.
    pub cpu: Duration,
}

impl Allowance {
    /// The wait not charged for an exchange that took `took`.
    pub fn uncharged(&self, took: Duration, wait: Wait) -> Duration {
        full_credit(took, wait).min(self.max_uncharged)
    }

    /// When the engine stops waiting, given the wait measured so far.
    pub fn deadline(&self, took: Duration, wait: Wait) -> Duration {
        self.give_up + self.uncharged(took, wait)
    }

    /// Whether an exchange `took` into its clock is still in time whatever
    /// its wait: before `give_up` the deadline cannot have passed (a wait
    /// only moves it later), so [`judge_call`] says `Within` for any wait,
    /// and an external referee's call measures its wait only past this.
    pub fn in_time_whatever_the_wait(&self, took: Duration) -> bool {
        took < self.give_up
    }
}

/// How one exchange that must be answered in its limit went, judged as a
/// bot's move is (an external referee's call: no timeout rules, only a
/// limit on its own time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// Still within its own time: keep waiting.
    Within,
    /// Over its limit of its own time.
    Over,
    /// Over only because the machine kept the CPU from it past the bound.
    HostOverloaded(Overload),
}

/// Judge an exchange still unanswered `took` after it began, with `wait`
/// measured: the rules of [`Clock::judge`] for a call with no answer yet.
pub fn judge_call(took: Duration, wait: Wait, allowance: Allowance) -> Call {
    if took < allowance.deadline(took, wait) {
        return Call::Within;
    }
    if full_credit(took, wait) > allowance.max_uncharged && wait.cpu < allowance.limit {
        return Call::HostOverloaded(overload(wait, allowance.max_uncharged));
    }
    Call::Over
}

/// The wait a move could be credited without the bound.
fn full_credit(took: Duration, wait: Wait) -> Duration {
    (wait.run_queue + wait.stalled).min(took.saturating_sub(wait.cpu))
}

/// How the machine failed an exchange whose credit passed the bound.
fn overload(wait: Wait, bound: Duration) -> Overload {
    Overload { run_queue: wait.run_queue, stalled: wait.stalled, bound }
}

/// What the engine saw by the end of an exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seen {
    /// The answer, this long after the clock started.
    Answer(Duration),
    /// Nothing before the engine gave up, this long after the clock started.
    Nothing(Duration),
    /// The bot is gone (died, closed its output, stopped reading).
    Gone,
}

/// The clock's decision about one exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// In time: the answer counts.
    OnTime,
    /// Over a soft limit: the answer counts, the overrun is recorded.
    LateCounted { by: Duration },
    /// No answer in time; the bot does not move this turn. A long-lived
    /// bot's answer to it is owed and will be discarded when it comes.
    TimedOut { by: Duration },
    /// As [`Decision::TimedOut`], and this was the `n`-th consecutive
    /// timeout: the bot is frozen for the rest of the game.
    TimedOutFrozen { by: Duration, consecutive: u32 },
    /// No answer in time where the game does not forgive it (the referee
    /// decides: the bot loses, or forfeits).
    TimedOutLoses { by: Duration },
    /// The bot is gone.
    Gone,
    /// Over the limit only because the machine did not run the bot: its
    /// wait for a CPU passed the bound, or the engine was stalled. Nobody
    /// is charged; the match ends as the machine's fault.
    HostOverloaded { why: Overload },
}

/// How the machine failed a move: what it kept from the bot, together
/// more than the clock forgives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overload {
    /// The bot (or the engine) waited this long for a CPU.
    pub run_queue: Duration,
    /// The engine's own loop was stopped this long.
    pub stalled: Duration,
    /// The most the clock forgives ([`Allowance::max_uncharged`]).
    pub bound: Duration,
}

impl std::fmt::Display for Overload {
    /// The larger cause first; both, and their sum, when both counted (the
    /// sum is what passed the bound, so a reason never reads "waited 39 ms,
    /// more than the 50 ms the clock forgives").
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |d: Duration| format!("{:.0} ms", d.as_secs_f64() * 1e3);
        let (run_queue, stalled) = (self.run_queue, self.stalled);
        if stalled >= run_queue {
            write!(f, "the match engine itself was stopped or starved for {}", ms(stalled))?;
            if !run_queue.is_zero() {
                write!(f, " and the bot waited {} for a CPU", ms(run_queue))?;
            }
        } else {
            write!(f, "the bot waited {} for a CPU that other programs held", ms(run_queue))?;
            if !stalled.is_zero() {
                write!(f, " and the match engine was stopped {}", ms(stalled))?;
            }
        }
        if !run_queue.is_zero() && !stalled.is_zero() {
            write!(f, ", {} in all", ms(run_queue + stalled))?;
        }
        write!(f, ", more than the {} the clock forgives", ms(self.bound))
    }
}

impl Decision {
    /// Whether the answer reaches the referee (otherwise it sees a timeout,
    /// or that the bot is gone).
    pub fn answer_counts(self) -> bool {
        matches!(self, Decision::OnTime | Decision::LateCounted { .. })
    }
    pub fn over_limit(self) -> bool {
        !matches!(self, Decision::OnTime | Decision::Gone | Decision::HostOverloaded { .. })
    }
}

/// Whether a line from a long-lived bot is the pending answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineUse {
    Answer,
    /// The late answer to an earlier request: discard it.
    Late,
}

/// One bot's time accounting for a match.
#[derive(Clone, Debug)]
pub struct Clock {
    policy: TimePolicy,
    first_extra: Duration,
    /// Lines are matched to requests in order (long-lived bots).
    in_order: bool,
    exchanges: u32,
    /// Answers to timed-out requests not received yet.
    owed: u32,
    consecutive: u32,
    pub timeouts: u32,
    pub answers: u32,
    frozen: bool,
    /// The start-up allowance of each process.
    startup: Duration,
    /// What is left of the time bank.
    bank: Duration,
    /// The part of the current exchange's limit that is the bank's.
    banked: Duration,
}

impl Clock {
    /// `in_order`: the bot is one long-lived process whose lines answer the
    /// requests in order (a late answer arrives later and must be skipped);
    /// false for a process per turn.
    pub fn new(policy: TimePolicy, first_extra: Duration, in_order: bool) -> Clock {
        Clock {
            policy,
            first_extra,
            in_order,
            exchanges: 0,
            owed: 0,
            consecutive: 0,
            timeouts: 0,
            answers: 0,
            frozen: false,
            startup: policy.startup.unwrap_or_default(),
            bank: policy.bank.unwrap_or_default(),
            banked: Duration::ZERO,
        }
    }

    /// A start-up allowance per process other than the policy's (the
    /// game's for the bot's language).
    pub fn startup(mut self, startup: Duration) -> Clock {
        self.startup = startup;
        self
    }

    /// What is left of the bot's time bank.
    pub fn bank_left(&self) -> Duration {
        self.bank
    }

    /// What is left of the bot's time bank, in a game that has one.
    pub fn bank(&self) -> Option<Duration> {
        self.policy.bank.map(|_| self.bank)
    }

    /// Start an exchange: its allowance.
    pub fn begin(&mut self) -> Allowance {
        let mut extra = if self.exchanges == 0 { self.first_extra } else { Duration::ZERO };
        // A process starts for this exchange: every one of a per-turn
        // program, the first of a long-lived one.
        if !self.in_order || self.exchanges == 0 {
            extra += self.startup;
        }
        self.exchanges += 1;
        self.banked = self.bank;
        let limit = self.policy.per_move + extra + self.bank;
        let give_up = match self.policy.on_timeout {
            OnTimeout::Soft { hard } => limit + hard.saturating_sub(self.policy.per_move),
            _ => limit,
        };
        Allowance { limit, give_up, max_uncharged: limit }
    }

    /// A line arrived while a request is pending.
    pub fn line(&mut self) -> LineUse {
        if self.owed > 0 {
            self.owed -= 1;
            LineUse::Late
        } else {
            LineUse::Answer
        }
    }

    /// `waiting` lines were there before a request was sent: none can answer
    /// it. Returns how many of them were owed late answers (the rest were
    /// unrequested).
    pub fn before_request(&mut self, waiting: u32) -> u32 {
        let late = waiting.min(self.owed);
        self.owed -= late;
        late
    }

    /// Whether the bot was frozen for the rest of the game.
    pub fn frozen(&self) -> bool {
        self.frozen
    }

    /// Decide an exchange: what was seen, when (wall time from the
    /// clock's start), and what the box did with the CPU meanwhile. Times
    /// are judged as charged time (see the module docs).
    pub fn judge(&mut self, seen: Seen, allowance: Allowance, wait: Wait) -> Decision {
        let wall = match seen {
            Seen::Gone => return Decision::Gone,
            Seen::Answer(t) | Seen::Nothing(t) => t,
        };
        let took = wall - allowance.uncharged(wall, wait);
        if matches!(seen, Seen::Answer(_)) && took <= allowance.limit {
            self.answers += 1;
            self.consecutive = 0;
            // Past its own limit: the excess comes from the bank.
            let own = allowance.limit.saturating_sub(self.banked);
            self.bank = self.bank.saturating_sub(took.saturating_sub(own));
            return Decision::OnTime;
        }
        let by = took.saturating_sub(allowance.limit);
        let full = wall - full_credit(wall, wait);
        let cut = full_credit(wall, wait) > allowance.max_uncharged;
        let counts_until = if matches!(self.policy.on_timeout, OnTimeout::Soft { .. }) { allowance.give_up } else { allowance.limit };
        let machines = cut && wait.cpu < allowance.limit && (full <= counts_until || matches!(seen, Seen::Nothing(_)));
        if !machines {
            // Over its own limit and the bank: the bank is spent.
            self.bank = Duration::ZERO;
        }
        if let (OnTimeout::Soft { .. }, Seen::Answer(_)) = (self.policy.on_timeout, seen) {
            if took <= allowance.give_up {
                // Soft limit: the answer counts; an overrun does not reset
                // nor add to a run of timeouts.
                self.answers += 1;
                self.timeouts += 1;
                return Decision::LateCounted { by };
            }
        }
        // Late (and not merely counted late) only because the bound cut the
        // credit: with all its wait forgiven the answer would have counted,
        // or the bot was still within its time when the engine stopped
        // waiting. A bot that used its whole limit in CPU is over it by
        // itself, whatever the machine did.
        if machines {
            return Decision::HostOverloaded { why: overload(wait, allowance.max_uncharged) };
        }
        // Late or missing. A late answer already read is not owed; a
        // missing one from a long-lived bot is, and is skipped when it comes.
        if matches!(seen, Seen::Nothing(_)) && self.in_order {
            self.owed += 1;
        }
        self.timeouts += 1;
        self.consecutive += 1;
        match self.policy.on_timeout {
            OnTimeout::NoMove { freeze_after: Some(n) } if self.consecutive >= n => {
                self.frozen = true;
                Decision::TimedOutFrozen { by, consecutive: self.consecutive }
            }
            OnTimeout::Loses | OnTimeout::Forfeits => Decision::TimedOutLoses { by },
            _ => Decision::TimedOut { by },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use koth_games::GameKind;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    /// One request's story: when (after its clock started) its answer line
    /// arrived, if ever, and the lines that were already waiting when it was
    /// sent. Late lines of earlier requests come as `extra_before`.
    #[derive(Clone, Copy)]
    struct Ask {
        /// The bot's own answer to this request arrives this late (ms).
        answer_at: Option<u64>,
        /// Late answers of earlier requests that arrive while this one is
        /// pending, before its own answer.
        late_lines_during: u32,
        /// Lines waiting before this request is sent.
        waiting: u32,
    }

    fn ask(answer_at: Option<u64>) -> Ask {
        Ask { answer_at, late_lines_during: 0, waiting: 0 }
    }

    /// Play a sequence of requests through a clock, as the engine does:
    /// sort waiting lines, begin, match arriving lines, then judge.
    fn run(game: GameKind, first_extra: u64, in_order: bool, asks: &[Ask]) -> (Vec<Decision>, Clock) {
        let mut clock = Clock::new(game.time_policy(), MS(first_extra), in_order);
        let mut out = Vec::new();
        for a in asks {
            clock.before_request(a.waiting);
            let allowance = clock.begin();
            let mut lines = a.late_lines_during;
            let mut answer = None;
            // Lines arrive in order: the late ones first, then this answer
            // (if it comes before the engine gives up).
            let arrives = a.answer_at.map(MS).filter(|&t| t <= allowance.give_up);
            while lines > 0 || arrives.is_some() && answer.is_none() {
                match clock.line() {
                    LineUse::Late => {
                        assert!(lines > 0, "a line was taken for a late answer that was its own");
                        lines -= 1;
                    }
                    LineUse::Answer if lines > 0 => panic!("a late answer was taken for the pending one"),
                    LineUse::Answer => answer = arrives,
                }
            }
            let seen = match answer {
                Some(t) => Seen::Answer(t),
                None => Seen::Nothing(allowance.give_up),
            };
            out.push(clock.judge(seen, allowance, Wait::default()));
        }
        (out, clock)
    }

    use Decision::*;

    /// A clock whose first-move allowance is spent (one answer on time).
    fn warmed(game: GameKind) -> Clock {
        let mut c = Clock::new(game.time_policy(), MS(1000), true);
        let a = c.begin();
        assert_eq!(c.judge(Seen::Answer(MS(1)), a, Wait::default()), OnTime);
        c
    }

    #[test]
    fn every_seed_policy_judges_the_limit_exactly() {
        // (game, what the engine saw (ms after the clock started), decision).
        let answer = |ms| Seen::Answer(MS(ms));
        let cases: &[(GameKind, Seen, Decision)] = &[
            (GameKind::Flit, answer(50), OnTime),
            // Seen 1 ms late (the engine woke up for the deadline and found it).
            (GameKind::Flit, answer(51), TimedOut { by: MS(1) }),
            (GameKind::Flit, Seen::Nothing(MS(50)), TimedOut { by: MS(0) }),
            (GameKind::Target, answer(50), OnTime),
            (GameKind::Target, answer(53), TimedOut { by: MS(3) }),
            (GameKind::Snake, answer(200), OnTime),
            (GameKind::Snake, answer(201), TimedOutLoses { by: MS(1) }),
            (GameKind::Snake, Seen::Nothing(MS(200)), TimedOutLoses { by: MS(0) }),
            (GameKind::Linkage, answer(5000), OnTime),
            (GameKind::Linkage, Seen::Nothing(MS(5000)), TimedOutLoses { by: MS(0) }),
            // Slime's 0.1 s is soft: counted up to the hard 2 s, then a pass.
            (GameKind::Slime, answer(100), OnTime),
            (GameKind::Slime, answer(150), LateCounted { by: MS(50) }),
            (GameKind::Slime, answer(2000), LateCounted { by: MS(1900) }),
            (GameKind::Slime, Seen::Nothing(MS(2000)), TimedOut { by: MS(1900) }),
        ];
        for &(game, seen, want) in cases {
            let mut c = warmed(game);
            let a = c.begin();
            assert_eq!(c.judge(seen, a, Wait::default()), want, "{game:?}, {seen:?}");
        }
        // The engine waits until the limit, or Slime's hard 2 s.
        for game in GameKind::ALL {
            let a = warmed(game).begin();
            let want = if game == GameKind::Slime { MS(2000) } else { game.time_policy().per_move };
            assert_eq!((a.limit, a.give_up), (game.time_policy().per_move, want), "{game:?}");
        }
    }

    #[test]
    fn the_wait_for_a_cpu_is_not_charged_up_to_its_bound() {
        // Target: 50 ms a move, so at most 50 ms of waiting is forgiven.
        // (what the engine saw, the box's run-queue wait and CPU, decision)
        let w = |run_queue: u64, cpu: u64| Wait { run_queue: MS(run_queue), cpu: MS(cpu), stalled: MS(0) };
        let stall = |ms: u64| Wait { stalled: MS(ms), ..Wait::default() };
        let answer = |ms| Seen::Answer(MS(ms));
        let over = |rq| HostOverloaded { why: Overload { run_queue: MS(rq), stalled: MS(0), bound: MS(50) } };
        let cases: &[(Seen, Wait, Decision)] = &[
            // The fair bot on a busy host: 35 ms of CPU, 20 ms in the run
            // queue, 57 ms of wall: charged 37 ms.
            (answer(57), w(20, 35), OnTime),
            // Wall past the limit by what it waited, exactly.
            (answer(90), w(40, 50), OnTime),
            // A bot slow with the CPU free is charged as today.
            (answer(60), w(0, 60), TimedOut { by: MS(10) }),
            (answer(60), w(0, 2), TimedOut { by: MS(10) }),
            // It waited, but not as long as it was late: charged the rest.
            (answer(80), w(10, 70), TimedOut { by: MS(20) }),
            // Threads that queue behind each other on the bot's own cores:
            // wall − CPU caps the credit (it waited for nothing but itself).
            (answer(60), w(400, 60), TimedOut { by: MS(10) }),
            (answer(60), w(400, 55), TimedOut { by: MS(5) }),
            // Past the bound: 35 ms of CPU, 70 ms in the queue. With all of
            // it forgiven the bot was on time: the machine's fault.
            (answer(105), w(70, 35), over(70)),
            // The engine gave up at limit + bound with the bot still
            // under its limit in CPU: the machine's fault too.
            (Seen::Nothing(MS(100)), w(60, 30), over(60)),
            // ... but not for a bot that had spent its whole limit in CPU.
            (Seen::Nothing(MS(100)), w(60, 50), TimedOut { by: MS(0) }),
            // Nothing by the extended deadline, waits within the bound.
            (Seen::Nothing(MS(80)), w(30, 50), TimedOut { by: MS(0) }),
            // The engine was stopped for 16 minutes: nobody is charged.
            (
                Seen::Nothing(MS(996_050)),
                stall(996_000),
                HostOverloaded { why: Overload { run_queue: MS(0), stalled: MS(996_000), bound: MS(50) } },
            ),
            // A 40 ms stall (a hypervisor's hiccup) in a move of 35 ms of
            // CPU answered at 76 ms: forgiven.
            (answer(76), Wait { cpu: MS(35), stalled: MS(40), ..Wait::default() }, OnTime),
        ];
        for &(seen, wait, want) in cases {
            let mut c = warmed(GameKind::Target);
            let a = c.begin();
            assert_eq!(a.max_uncharged, MS(50));
            assert_eq!(c.judge(seen, a, wait), want, "{seen:?} {wait:?}");
        }
        // The engine's deadline moves with the wait so far, up to the bound.
        let a = warmed(GameKind::Target).begin();
        assert_eq!(a.deadline(MS(50), w(0, 10)), MS(50));
        assert_eq!(a.deadline(MS(50), w(15, 30)), MS(65));
        assert_eq!(a.deadline(MS(90), w(500, 10)), MS(100));
        // A machine-fault move neither counts a timeout nor breaks a run.
        let mut c = warmed(GameKind::Flit);
        for _ in 0..4 {
            let a = c.begin();
            c.judge(Seen::Nothing(MS(50)), a, Wait::default());
        }
        let a = c.begin();
        assert!(matches!(c.judge(Seen::Nothing(MS(100)), a, w(80, 10)), HostOverloaded { .. }));
        assert_eq!((c.timeouts, c.frozen()), (4, false));
        assert!(!over(70).over_limit() && !over(70).answer_counts());
        // Slime's soft limit: forgiven wait brings an answer back under
        // 0.1 s; past the hard 2 s only by a wait past the bound is the
        // machine's fault; a late answer within 2 s is only counted late.
        let mut c = warmed(GameKind::Slime);
        let a = c.begin();
        assert_eq!(c.judge(answer(150), a, w(60, 40)), OnTime);
        let a = c.begin();
        assert_eq!(c.judge(answer(400), a, w(200, 100)), LateCounted { by: MS(200) });
        let a = c.begin();
        assert!(matches!(c.judge(answer(2150), a, w(300, 90)), HostOverloaded { .. }));
    }

    /// The reason a match the machine failed gives: the sum of its causes
    /// is what passed the bound, so both are said when both counted.
    #[test]
    fn an_overload_says_what_passed_the_bound() {
        let o = |run_queue, stalled| Overload { run_queue: MS(run_queue), stalled: MS(stalled), bound: MS(50) }.to_string();
        let cases = [
            (o(70, 0), "the bot waited 70 ms for a CPU that other programs held, more than the 50 ms the clock forgives"),
            // CI's: the bot's start-up waited 39 ms and the engine 12 ms more.
            (
                o(39, 12),
                "the bot waited 39 ms for a CPU that other programs held and the match engine was stopped 12 ms, \
                 51 ms in all, more than the 50 ms the clock forgives",
            ),
            (o(0, 996_000), "the match engine itself was stopped or starved for 996000 ms, more than the 50 ms the clock forgives"),
            (
                o(20, 40),
                "the match engine itself was stopped or starved for 40 ms and the bot waited 20 ms for a CPU, \
                 60 ms in all, more than the 50 ms the clock forgives",
            ),
        ];
        for (said, want) in cases {
            assert_eq!(said, want);
        }
    }

    #[test]
    fn a_referees_call_is_judged_on_its_own_time() {
        let a = Allowance { limit: MS(2000), give_up: MS(2000), max_uncharged: MS(2000) };
        let w = |run_queue: u64, cpu: u64| Wait { run_queue: MS(run_queue), cpu: MS(cpu), stalled: MS(0) };
        // At load 11, 0.8 s of CPU an answer and 1.5 s in the run queue:
        // still within its own time at 2.1 s of wall.
        assert_eq!(judge_call(MS(2100), w(1300, 800), a), Call::Within);
        // Working the whole time: over its 2 s.
        assert_eq!(judge_call(MS(2000), w(0, 2000), a), Call::Over);
        // Idle and not waiting (a hung referee): over.
        assert_eq!(judge_call(MS(2000), w(0, 1), a), Call::Over);
        // Waiting past the bound with little CPU: the machine's fault.
        assert!(matches!(judge_call(MS(4100), w(3500, 500), a), Call::HostOverloaded(_)));
    }

    /// Before its give-up a call is within whatever its wait (the referee
    /// skips measuring it then); from the give-up on, the wait decides.
    #[test]
    fn before_the_give_up_no_wait_changes_a_call() {
        let a = Allowance { limit: MS(2000), give_up: MS(2000), max_uncharged: MS(500) };
        let waits = [
            Wait::default(),
            Wait { run_queue: MS(0), cpu: MS(1999), stalled: MS(0) },
            Wait { run_queue: MS(1_000_000), cpu: MS(0), stalled: MS(0) },
            Wait { run_queue: MS(0), cpu: MS(0), stalled: MS(1_000_000) },
            Wait { run_queue: MS(1_000_000), cpu: MS(1_000_000), stalled: MS(1_000_000) },
        ];
        for took in [0, 1, 600, 1999] {
            assert!(a.in_time_whatever_the_wait(MS(took)));
            for w in waits {
                assert_eq!(judge_call(MS(took), w, a), Call::Within, "{took} ms, {w:?}");
                assert!(a.deadline(MS(took), w) >= a.give_up, "{took} ms, {w:?}");
            }
        }
        for took in [2000, 2001, 9000] {
            assert!(!a.in_time_whatever_the_wait(MS(took)));
            assert_eq!(judge_call(MS(took), Wait { run_queue: MS(0), cpu: MS(took), stalled: MS(0) }, a), Call::Over, "{took}");
        }
    }

    #[test]
    fn the_first_move_allowance_is_for_the_first_exchange_only() {
        // A silent bot gets 50 + 1000 ms once, then 50 ms per move: a match
        // of N turns takes about N × 50 ms, not N seconds.
        let mut clock = Clock::new(GameKind::Target.time_policy(), MS(1000), true);
        let first = clock.begin();
        assert_eq!(first, Allowance { limit: MS(1050), give_up: MS(1050), max_uncharged: MS(1050) });
        assert_eq!(clock.judge(Seen::Nothing(first.give_up), first, Wait::default()), TimedOut { by: MS(0) });
        for _ in 0..100 {
            let a = clock.begin();
            assert_eq!(a, Allowance { limit: MS(50), give_up: MS(50), max_uncharged: MS(50) });
            assert_eq!(clock.judge(Seen::Nothing(a.give_up), a, Wait::default()), TimedOut { by: MS(0) });
        }
        // Target never freezes: 101 timeouts, the bot still asked.
        assert!(!clock.frozen());
        assert_eq!(clock.timeouts, 101);
        // A start-up answered slowly still spends it.
        let (d, _) = run(GameKind::Flit, 1000, true, &[ask(Some(900)), ask(Some(60))]);
        assert_eq!(d, vec![OnTime, TimedOut { by: MS(0) }]);
    }

    #[test]
    fn the_fifth_consecutive_flit_timeout_freezes_and_an_answer_in_time_resets_the_run() {
        let late = ask(None);
        // Lines answer requests in order: the four late answers come first,
        // then this request's own, in time.
        let ok = Ask { answer_at: Some(10), late_lines_during: 4, waiting: 0 };
        let (d, clock) = run(GameKind::Flit, 0, true, &[late, late, late, late, ok, late, late, late, late, late]);
        let t = TimedOut { by: MS(0) };
        assert_eq!(d, vec![t, t, t, t, OnTime, t, t, t, t, TimedOutFrozen { by: MS(0), consecutive: 5 }]);
        assert!(clock.frozen());
        assert_eq!((clock.timeouts, clock.answers), (9, 1));
    }

    #[test]
    fn a_late_answer_arriving_during_the_next_request_is_discarded_not_taken() {
        // Request 1 times out; its answer arrives while request 2 is
        // pending, followed by request 2's own answer, which counts.
        let asks = [ask(None), Ask { answer_at: Some(20), late_lines_during: 1, waiting: 0 }];
        let (d, _) = run(GameKind::Target, 0, true, &asks);
        assert_eq!(d, vec![TimedOut { by: MS(0) }, OnTime]);
        // Two timeouts, then both late answers were already waiting when
        // request 3 was sent: both discarded, nothing owed any more.
        let asks = [ask(None), ask(None), Ask { answer_at: Some(5), late_lines_during: 0, waiting: 2 }];
        let (d, _) = run(GameKind::Target, 0, true, &asks);
        assert_eq!(d[2], OnTime);
        // Lines waiting that nobody owes are unrequested.
        let mut c = Clock::new(GameKind::Target.time_policy(), MS(0), true);
        assert_eq!(c.before_request(3), 0);
    }

    #[test]
    fn a_late_answer_that_was_read_is_not_owed() {
        // Seen after the limit (the engine noticed it when it woke up for
        // the deadline): late, and nothing is owed, so the next line answers
        // the next request.
        let mut c = Clock::new(GameKind::Target.time_policy(), MS(0), true);
        let a = c.begin();
        assert_eq!(c.judge(Seen::Answer(MS(52)), a, Wait::default()), TimedOut { by: MS(2) });
        let a = c.begin();
        assert_eq!(c.line(), LineUse::Answer);
        assert_eq!(c.judge(Seen::Answer(MS(3)), a, Wait::default()), OnTime);
    }

    #[test]
    fn per_turn_processes_owe_nothing() {
        let mut c = Clock::new(GameKind::Slime.time_policy(), MS(0), false);
        let a = c.begin();
        assert_eq!(c.judge(Seen::Nothing(a.give_up), a, Wait::default()), TimedOut { by: MS(1900) });
        c.begin();
        assert_eq!(c.line(), LineUse::Answer);
    }

    #[test]
    fn gone_is_gone_whatever_the_time() {
        let mut c = Clock::new(GameKind::Snake.time_policy(), MS(0), true);
        let a = c.begin();
        assert_eq!(c.judge(Seen::Gone, a, Wait::default()), Gone);
        assert!(!Gone.answer_counts() && !Gone.over_limit());
        assert!(LateCounted { by: MS(1) }.answer_counts() && LateCounted { by: MS(1) }.over_limit());
    }

    /// A time bank over the match, and a start-up allowance per process:
    /// each case a policy, whether the bot is long-lived, and its moves
    /// (the answer's time, or none) with the decision, the limit the move
    /// had and the bank left after it.
    #[test]
    fn a_bank_lends_time_over_the_match_and_each_process_gets_its_start_up() {
        type Move = (Option<u64>, Decision, u64, u64);
        let policy = |bank: Option<u64>, startup: Option<u64>, on_timeout: OnTimeout| TimePolicy {
            bank: bank.map(MS),
            startup: startup.map(MS),
            ..TimePolicy::new(MS(100), on_timeout)
        };
        let no_move = OnTimeout::NoMove { freeze_after: None };
        let cases: Vec<(&str, TimePolicy, bool, Vec<Move>)> = vec![
            (
                "no bank, no start-up: the move's limit, as ever",
                policy(None, None, no_move),
                true,
                vec![(Some(100), OnTime, 100, 0), (Some(101), TimedOut { by: MS(1) }, 100, 0)],
            ),
            (
                "a bank drawn on, then spent by a timeout",
                policy(Some(150), None, no_move),
                true,
                vec![
                    (Some(90), OnTime, 250, 150),
                    (Some(120), OnTime, 250, 130),
                    (Some(200), OnTime, 230, 30),
                    (Some(140), TimedOut { by: MS(10) }, 130, 0),
                    (Some(110), TimedOut { by: MS(10) }, 100, 0),
                    (Some(90), OnTime, 100, 0),
                ],
            ),
            (
                "a move that never comes spends the bank",
                policy(Some(500), None, no_move),
                true,
                vec![(None, TimedOut { by: MS(0) }, 600, 0), (Some(100), OnTime, 100, 0)],
            ),
            (
                "a soft limit's late answer counts and spends the bank",
                policy(Some(50), None, OnTimeout::Soft { hard: MS(1000) }),
                true,
                vec![(Some(200), LateCounted { by: MS(50) }, 150, 0), (Some(120), LateCounted { by: MS(20) }, 100, 0)],
            ),
            (
                "start-up on every move of a per-turn program",
                policy(None, Some(80), no_move),
                false,
                vec![(Some(180), OnTime, 180, 0), (Some(180), OnTime, 180, 0), (Some(181), TimedOut { by: MS(1) }, 180, 0)],
            ),
            (
                "start-up on the first move only of a long-lived one",
                policy(None, Some(80), no_move),
                true,
                vec![(Some(180), OnTime, 180, 0), (Some(180), TimedOut { by: MS(80) }, 100, 0)],
            ),
            (
                "start-up and bank together, per turn",
                policy(Some(40), Some(80), OnTimeout::Loses),
                false,
                vec![(Some(200), OnTime, 220, 20), (Some(230), TimedOutLoses { by: MS(30) }, 200, 0)],
            ),
        ];
        for (what, policy, long_lived, moves) in cases {
            let mut c = Clock::new(policy, MS(0), long_lived);
            for (i, (answer, want, limit, bank_after)) in moves.into_iter().enumerate() {
                let a = c.begin();
                assert_eq!(a.limit, MS(limit), "{what}: move {i}'s limit");
                let seen = match answer {
                    Some(t) => Seen::Answer(MS(t)),
                    None => Seen::Nothing(a.give_up),
                };
                assert_eq!(c.judge(seen, a, Wait::default()), want, "{what}: move {i}");
                assert_eq!(c.bank_left(), MS(bank_after), "{what}: the bank after move {i}");
            }
        }
        // The game's allowance for the bot's language replaces the policy's.
        let mut c = Clock::new(policy(None, Some(80), no_move), MS(0), false).startup(MS(300));
        assert_eq!(c.begin().limit, MS(400));
    }
}
