//! A private PostgreSQL is stopped only by whoever started it: a second
//! start on the same data folder is refused, says why, and leaves the first
//! server running (before, its failed start stopped the other's server on
//! its way out).

mod common;

#[tokio::test]
async fn a_second_start_on_the_same_data_refuses_and_stops_nothing() {
    let Some(first) = common::postgres("twice") else { return };
    let Err(err) = koth_scheduler::pg::PrivatePostgres::start(first.data_dir(), None) else { panic!("a second server started") };
    assert!(err.contains("already running") && err.contains(&first.data_dir().display().to_string()), "{err}");
    // The refused attempt has been dropped: the first server still answers.
    let pool = common::pool(&first, 1).await;
    let one: i32 = sqlx::query_scalar("SELECT 1").fetch_one(&pool).await.unwrap();
    assert_eq!(one, 1);
}
