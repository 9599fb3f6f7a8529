//! The per-account and per-address limits, as pure rules: what an account
//! (or an address) has used, what the server allows, and the refusal that
//! says which limit and when it frees up.
//!
//! The rules are applied **inside the transaction that does what they
//! limit**, after a lock that serialises the account's (or the sign-ups')
//! writes (`db::store::submit`, `db::store::create_challenge`,
//! `db::accounts::sign_up`): a usage read before the insert and checked
//! outside it let 24 of 24 simultaneous submissions through a limit of 8.
//! This module holds no I/O, so the rules are tested with tables.

/// A refused request: over which limit, and in how many seconds it frees up
/// (the 429's Retry-After).
#[derive(Clone, Debug, PartialEq)]
pub struct OverLimit {
    pub retry_after_secs: f64,
    pub message: String,
}

/// What one account may submit (hosts are not limited).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SubmissionLimits {
    /// Versions waiting for their compile at once.
    pub compiles_queued: u32,
    /// Versions in an hour.
    pub submissions_per_hour: u32,
    /// Bytes of sources (as stored) in a day.
    pub upload_bytes_per_day: u64,
}

/// What an account has submitted lately.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SubmissionUsage {
    /// Versions created in the last hour, and seconds until the oldest of
    /// them is an hour old.
    pub last_hour: i64,
    pub hour_frees_in: f64,
    /// Bytes of sources uploaded in the last day, and seconds until the
    /// oldest of them is a day old.
    pub bytes_last_day: i64,
    pub day_frees_in: f64,
    /// Versions waiting for their compile.
    pub pending: i64,
}

/// Whether one more version of `stored` bytes (`None`: not known yet, the
/// quick check before the upload is read) keeps the account within `l`.
pub fn check_submission(l: &SubmissionLimits, u: &SubmissionUsage, stored: Option<usize>) -> Result<(), OverLimit> {
    if u.pending >= i64::from(l.compiles_queued) {
        return Err(OverLimit {
            retry_after_secs: 10.0,
            message: format!(
                "{} of your versions are waiting for their compile, the most this server queues per account ({}); try again when one \
                 is compiled",
                u.pending, l.compiles_queued
            ),
        });
    }
    if u.last_hour >= i64::from(l.submissions_per_hour) {
        return Err(OverLimit {
            retry_after_secs: u.hour_frees_in,
            message: format!(
                "you submitted {} versions in the last hour, the most this server takes ({} an hour); the next one is accepted in {:.0} s",
                u.last_hour,
                l.submissions_per_hour,
                u.hour_frees_in.ceil()
            ),
        });
    }
    if let Some(stored) = stored {
        let total = u.bytes_last_day.saturating_add(stored as i64);
        if total > i64::try_from(l.upload_bytes_per_day).unwrap_or(i64::MAX) {
            return Err(OverLimit {
                retry_after_secs: u.day_frees_in,
                message: format!(
                    "this version ({stored} bytes as stored) would take your uploads of the last 24 hours to {total} bytes, over this \
                     server's {} a day; the oldest of them stops counting in {:.0} s",
                    l.upload_bytes_per_day,
                    u.day_frees_in.ceil()
                ),
            });
        }
    }
    Ok(())
}

/// Whether an account with `in_flight` challenges queued or playing may ask
/// for one more, `limit` at once.
pub fn check_challenge(limit: u32, in_flight: i64) -> Result<(), OverLimit> {
    if in_flight < i64::from(limit) {
        return Ok(());
    }
    Err(OverLimit {
        retry_after_secs: 30.0,
        message: format!(
            "you have {in_flight} challenges queued or playing, the most this server allows at once ({limit}); try again when one has \
             finished, or cancel one of them"
        ),
    })
}

/// How many accounts may be made: from one address, and in all, per hour.
/// Every other per-account limit multiplies by the accounts one person can
/// make (76 a second were made with none).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SignupLimits {
    pub per_address_per_hour: u32,
    pub per_hour: u32,
}

/// Sign-ups of the last hour, in all and from the caller's address, each
/// with the seconds until the oldest of them is an hour old.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SignupUsage {
    pub last_hour: i64,
    pub hour_frees_in: f64,
    pub from_address: i64,
    pub address_frees_in: f64,
}

/// Whether one more account may be made now. An unknown address (a request
/// that did not come over a socket, such as a test's) is counted in all only.
pub fn check_signup(l: &SignupLimits, u: &SignupUsage) -> Result<(), OverLimit> {
    if u.from_address >= i64::from(l.per_address_per_hour) {
        return Err(OverLimit {
            retry_after_secs: u.address_frees_in,
            message: format!(
                "{} accounts were made from your address in the last hour, the most this server allows ({} an hour); try again in \
                 {:.0} s",
                u.from_address,
                l.per_address_per_hour,
                u.address_frees_in.ceil()
            ),
        });
    }
    if u.last_hour >= i64::from(l.per_hour) {
        return Err(OverLimit {
            retry_after_secs: u.hour_frees_in,
            message: format!(
                "this server has made {} accounts in the last hour, the most it makes ({} an hour); try again in {:.0} s",
                u.last_hour,
                l.per_hour,
                u.hour_frees_in.ceil()
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const L: SubmissionLimits = SubmissionLimits { compiles_queued: 2, submissions_per_hour: 3, upload_bytes_per_day: 1000 };

    fn usage(pending: i64, last_hour: i64, bytes: i64) -> SubmissionUsage {
        SubmissionUsage { last_hour, hour_frees_in: 1200.4, bytes_last_day: bytes, day_frees_in: 50_000.0, pending }
    }

    /// A refusal: a text its message contains, and its Retry-After.
    type Refused = Option<(&'static str, f64)>;

    #[test]
    fn submissions_table() {
        // (usage, new version's bytes, refused)
        let cases: &[(SubmissionUsage, Option<usize>, Refused)] = &[
            (usage(0, 0, 0), None, None),
            (usage(0, 0, 0), Some(1000), None),
            (usage(1, 2, 999), None, None),
            (usage(2, 0, 0), None, Some(("2 of your versions are waiting", 10.0))),
            (usage(0, 3, 0), None, Some(("3 versions in the last hour", 1200.4))),
            (usage(0, 3, 0), Some(1), Some(("3 versions in the last hour", 1200.4))),
            (usage(0, 0, 999), Some(1), None),
            (usage(0, 0, 999), Some(2), Some(("to 1001 bytes", 50_000.0))),
            // The bytes are only known once the upload is read.
            (usage(0, 0, 5000), None, None),
            // Compiles waiting are said first: they free up soonest.
            (usage(5, 5, 5000), Some(1), Some(("waiting for their compile", 10.0))),
        ];
        for (u, stored, want) in cases {
            let got = check_submission(&L, u, *stored);
            match want {
                None => assert_eq!(got, Ok(()), "{u:?} {stored:?}"),
                Some((text, retry)) => {
                    let e = got.expect_err(&format!("{u:?} {stored:?} should be refused"));
                    assert!(e.message.contains(text), "{e:?} lacks {text:?}");
                    assert_eq!(e.retry_after_secs, *retry);
                }
            }
        }
    }

    #[test]
    fn challenges_and_signups_table() {
        assert_eq!(check_challenge(3, 2), Ok(()));
        let e = check_challenge(3, 3).unwrap_err();
        assert!(e.message.contains("you have 3 challenges queued or playing") && e.message.contains("(3)"), "{e:?}");
        assert!(check_challenge(3, 7).is_err());

        let l = SignupLimits { per_address_per_hour: 2, per_hour: 5 };
        let u = |all, mine| SignupUsage { last_hour: all, hour_frees_in: 100.0, from_address: mine, address_frees_in: 20.0 };
        assert_eq!(check_signup(&l, &u(4, 1)), Ok(()));
        let e = check_signup(&l, &u(4, 2)).unwrap_err();
        assert!(e.message.contains("2 accounts were made from your address"), "{e:?}");
        assert_eq!(e.retry_after_secs, 20.0);
        let e = check_signup(&l, &u(5, 0)).unwrap_err();
        assert!(e.message.contains("made 5 accounts in the last hour"), "{e:?}");
        assert_eq!(e.retry_after_secs, 100.0);
    }
}
