//! Every enumerated name in the generated OpenAPI document is the code's
//! own list, and every one is accounted for here: an enum the document
//! gains without a line in this table fails, so no name reaches a client
//! from a second list.

use koth_ladder::contest::Phase;
use koth_ladder::format::FormatName;
use koth_scheduler::types::{AbState, AuditAction, GameStatus, HealthStatus, JobState, MatchKind, MatchState, SeatResult, VersionStatus};
use serde_json::Value;

/// Where in the document an enum is, and its values.
fn enums(v: &Value, path: &str, out: &mut Vec<(String, Vec<String>)>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::Array(values)) = m.get("enum") {
                out.push((path.to_owned(), values.iter().map(|x| x.as_str().unwrap_or("?").to_owned()).collect()));
            }
            for (k, x) in m {
                enums(x, &format!("{path}/{k}"), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                enums(x, &format!("{path}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn names<T: serde::Serialize>(all: &[T]) -> Vec<String> {
    all.iter().map(|x| serde_json::to_value(x).unwrap().as_str().unwrap().to_owned()).collect()
}

#[test]
fn every_enum_in_the_document_is_the_codes_list() {
    let doc = serde_json::to_value(koth_web::http::openapi_document()).unwrap();
    let mut found = Vec::new();
    enums(&doc, "", &mut found);
    // Each schema of the document that is an enum, and the code's list.
    let code: Vec<(&str, Vec<String>)> = vec![
        ("FormatName", names(&FormatName::ALL)),
        ("Phase", names(&Phase::ALL)),
        ("JobState", names(JobState::ALL)),
        ("MatchState", names(MatchState::ALL)),
        ("MatchKind", names(MatchKind::ALL)),
        ("VersionStatus", names(VersionStatus::ALL)),
        ("GameStatus", names(GameStatus::ALL)),
        ("AuditAction", names(AuditAction::ALL)),
        ("SeatResult", names(SeatResult::ALL)),
        ("HealthStatus", names(HealthStatus::ALL)),
        ("AbState", names(AbState::ALL)),
    ];
    let mut unaccounted = Vec::new();
    for (path, values) in &found {
        let schema = path.strip_prefix("/components/schemas/").unwrap_or(path);
        match code.iter().find(|(name, _)| *name == schema) {
            Some((_, want)) => assert_eq!(values, want, "{path}: the document's enum is not the code's list"),
            None => unaccounted.push(format!("{path}: {values:?}")),
        }
    }
    assert!(
        unaccounted.is_empty(),
        "enums in the document this test does not know; add each with the code's list:\n{}",
        unaccounted.join("\n")
    );
    // The check reads the document: the formats are there, as an enum.
    for schema in ["FormatName", "SeatResult", "HealthStatus", "VersionStatus"] {
        assert!(found.iter().any(|(p, _)| *p == format!("/components/schemas/{schema}")), "{schema} not in {found:?}");
    }
}
