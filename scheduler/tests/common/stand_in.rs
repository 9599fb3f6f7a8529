//! A stand-in runner: claims match jobs and records outcomes decided by
//! the bots' known strengths, so scheduler tests are about matchmaking,
//! rating and contests, not about bots.

use std::time::Duration;

use koth_games::replay::Replay;
use koth_games::MatchResult;
use koth_ladder::outcome::SeatOutcome;
use koth_runner::BotStatus;
use koth_scheduler::db::queue::Queue;
use koth_scheduler::db::results::{record_match, MatchOutcome};
use koth_scheduler::job::Job;
use koth_scheduler::packed::PackedReplay;
use rand::Rng;
use sqlx::PgPool;

/// Claim every queued match job and record an outcome from `strength`:
/// the stronger bot wins with probability 1 / (1 + 10^(-diff / 4)).
pub async fn play_queued<R: Rng>(pool: &PgPool, strength: &dyn Fn(i64) -> f64, rng: &mut R) -> usize {
    let q = Queue::new(pool.clone());
    let mut played = 0;
    while let Some(job) = q.claim("stand-in", &["match"], Duration::from_secs(60)).await.unwrap() {
        let Job::Match { match_id } = job.job().unwrap() else { panic!("{job:?} is not a match") };
        let bots: Vec<i64> = sqlx::query_scalar("SELECT bot_id FROM match_seats WHERE match_id = $1 ORDER BY seat")
            .bind(match_id)
            .fetch_all(pool)
            .await
            .unwrap();
        let (a, b) = (strength(bots[0]), strength(bots[1]));
        let p_first = 1.0 / (1.0 + 10f64.powf((b - a) / 4.0));
        let first_wins = rng.gen::<f64>() < p_first;
        let ranks = if first_wins { [1, 2] } else { [2, 1] };
        let outcome = MatchOutcome {
            engine: "stand-in".into(),
            turns: 1,
            replay: any_replay(),
            seats: (0..2)
                .map(|i| SeatOutcome {
                    seat: i as i32,
                    score: if ranks[i] == 1 { 1.0 } else { 0.0 },
                    rank: ranks[i],
                    result: if ranks[i] == 1 { MatchResult::Win } else { MatchResult::Loss },
                    status: BotStatus::Ok,
                    stderr: String::new(),
                    stderr_turns: Vec::new(),
                    moves: 1,
                    timeouts: 0,
                    invalid_moves: 0,
                })
                .collect(),
        };
        let mut tx = pool.begin().await.unwrap();
        Queue::complete(&mut tx, &job).await.unwrap();
        record_match(&mut tx, match_id, &outcome).await.unwrap();
        tx.commit().await.unwrap();
        played += 1;
    }
    played
}

/// A replay for matches these tests decide without playing them.
pub fn any_replay() -> PackedReplay {
    let r: Replay = serde_json::from_value(serde_json::json!({"game": "target", "seed": "1", "seats": [{}, {}], "turns": []})).unwrap();
    PackedReplay::pack(&r)
}
