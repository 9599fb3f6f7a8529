//! Cores for the bots that think at the same time.
//!
//! A runner host gives its matches a **budget** of cores ([`CoreBudget`]:
//! `koth runner --cpus`, by default every core the process may run on). A
//! match takes a [`CoreLease`] of as many cores as it has bots thinking at
//! once (one in a game of alternating moves, every seat in a game of
//! simultaneous moves; [`Game::thinking_at_once`]), or the whole budget
//! when it needs more than there is, if they are free when it starts. The
//! engine then runs each bot on move on a core of the lease that no other
//! bot on move uses (the box's `cpuset`), so a bot on the clock never
//! shares its core with another bot on the clock, of its match or of
//! another.
//!
//! When the cores are not free (another match holds them), the match is
//! played anyway, unpinned, under the clock's rules: the time its bots
//! wait for a CPU is not charged (see the engine's `clock`), and a wait
//! past the clock's bound ends it as the machine's fault, to be played
//! again. Waiting for cores instead was tried: `koth up`'s two runners on
//! two cores then played one simultaneous game at a time, finished 66
//! matches in `koth bench soak`'s five minutes (an earlier day's ten-minute soak
//! finished 255), and its resident memory grew 1.43x and 1.46x in two
//! runs where the soak test allows 1.4.
//!
//! Every worker loop of one process shares one budget. Several runner
//! processes on one host each need a budget of their own cores
//! (`--cpus 0-1` and `--cpus 2-3`, or Docker's `cpuset` per container): a
//! budget does not see another process's leases.
//!
//! [`Game::thinking_at_once`]: crate::game::Game::thinking_at_once

use std::sync::{Arc, Mutex};

/// The cores this process's matches may use, and which are leased now.
#[derive(Clone, Debug)]
pub struct CoreBudget {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    cores: Vec<u32>,
    /// `free[i]`: `cores[i]` is not leased.
    free: Mutex<Vec<bool>>,
}

impl CoreBudget {
    /// A budget of these cores (duplicates removed). Empty: no pinning, every
    /// lease is empty and granted at once.
    pub fn new(cores: &[u32]) -> CoreBudget {
        let mut cores = cores.to_vec();
        cores.sort_unstable();
        cores.dedup();
        let free = Mutex::new(vec![true; cores.len()]);
        CoreBudget { shared: Arc::new(Shared { cores, free }) }
    }

    /// Every core this process may run on (its affinity mask).
    pub fn all_allowed() -> CoreBudget {
        CoreBudget::new(&allowed_cores())
    }

    pub fn cores(&self) -> &[u32] {
        &self.shared.cores
    }

    /// `want` cores (the whole budget when it has fewer), if that many are
    /// free now; `None` if not.
    pub fn try_lease(&self, want: usize) -> Option<CoreLease> {
        let want = want.min(self.shared.cores.len());
        let mut free = self.shared.free.lock().unwrap_or_else(|p| p.into_inner());
        if free.iter().filter(|&&x| x).count() < want {
            return None;
        }
        let mut cores = Vec::with_capacity(want);
        for (i, f) in free.iter_mut().enumerate() {
            if cores.len() == want {
                break;
            }
            if *f {
                *f = false;
                cores.push(self.shared.cores[i]);
            }
        }
        Some(CoreLease { cores, budget: self.clone() })
    }

    /// Cores not leased now.
    pub fn free(&self) -> usize {
        self.shared.free.lock().unwrap_or_else(|p| p.into_inner()).iter().filter(|&&x| x).count()
    }
}

/// Cores a match holds; given back when dropped.
#[derive(Debug)]
pub struct CoreLease {
    cores: Vec<u32>,
    budget: CoreBudget,
}

impl CoreLease {
    pub fn cores(&self) -> &[u32] {
        &self.cores
    }
}

impl Drop for CoreLease {
    fn drop(&mut self) {
        let shared = &self.budget.shared;
        let mut free = shared.free.lock().unwrap_or_else(|p| p.into_inner());
        for c in &self.cores {
            if let Some(i) = shared.cores.iter().position(|x| x == c) {
                free[i] = true;
            }
        }
    }
}

/// The cores this process may run on.
pub fn allowed_cores() -> Vec<u32> {
    // SAFETY: an all-zero cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: sched_getaffinity writes at most size_of::<cpu_set_t>() bytes
    // into `set`, which lives across the call; pid 0 is this thread.
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r != 0 {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        return (0..n as u32).collect();
    }
    // SAFETY: CPU_ISSET reads the set only, for indices below CPU_SETSIZE.
    (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).map(|c| c as u32).collect()
}

/// Cores as `--cpus` names them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreList(pub Vec<u32>);

/// Parse `--cpus`: a kernel cpu list (`0-3,6`) of cores this process may
/// run on, or `all`.
pub fn parse_cpus(text: &str) -> Result<CoreList, String> {
    parse_core_list(text).map(CoreList)
}

fn parse_core_list(text: &str) -> Result<Vec<u32>, String> {
    if text.trim() == "all" {
        return Ok(allowed_cores());
    }
    let cores = koth_sandbox::cgroup::parse_cpu_list(text)
        .filter(|c| !c.is_empty())
        .ok_or_else(|| format!("--cpus {text:?}: expected a list of cores such as 0-3 or 0,2,4 (or all)"))?;
    let allowed = allowed_cores();
    if let Some(c) = cores.iter().find(|c| !allowed.contains(c)) {
        return Err(format!("--cpus {text:?}: core {c} is not one this process may run on ({})", koth_sandbox::cgroup::cpu_list(&allowed)));
    }
    Ok(cores)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leases_are_distinct_and_given_back() {
        let b = CoreBudget::new(&[3, 1, 2, 1]);
        assert_eq!(b.cores(), [1, 2, 3]);
        let a = b.try_lease(2).unwrap();
        let c = b.try_lease(1).unwrap();
        assert_eq!((a.cores(), c.cores()), ([1, 2].as_slice(), [3].as_slice()));
        assert!(b.try_lease(1).is_none(), "no core is free");
        drop(a);
        assert_eq!(b.free(), 2);
        // More than the budget: the whole budget, once it is all free.
        assert!(b.try_lease(5).is_none());
        drop(c);
        assert_eq!(b.try_lease(5).unwrap().cores(), [1, 2, 3]);
        // A lease is given back when dropped, from any thread.
        let held = b.try_lease(3).unwrap();
        std::thread::spawn(move || drop(held)).join().unwrap();
        assert_eq!(b.free(), 3);
    }

    #[test]
    fn an_empty_budget_grants_empty_leases() {
        let b = CoreBudget::new(&[]);
        assert!(b.try_lease(4).unwrap().cores().is_empty());
    }

    #[test]
    fn cpus_are_parsed_and_checked() {
        let allowed = allowed_cores();
        assert!(!allowed.is_empty());
        assert_eq!(parse_cpus(&allowed[0].to_string()).unwrap(), CoreList(vec![allowed[0]]));
        assert_eq!(parse_cpus("all").unwrap(), CoreList(allowed));
        for bad in ["", "x", "3-1", "99999"] {
            assert!(parse_cpus(bad).is_err(), "{bad:?}");
        }
    }
}
