//! `koth languages`: the languages koth knows and whether their toolchain is here.

use clap::Args;

#[derive(Args)]
pub struct LanguagesArgs {
    /// Print as JSON.
    #[arg(long)]
    json: bool,
}

/// The first line the toolchain prints about its version, or why not.
fn version(cmd: &[String]) -> Result<String, String> {
    let (prog, args) = cmd.split_first().ok_or("no version command")?;
    let out = std::process::Command::new(prog).args(args).output().map_err(|e| format!("{prog}: {e}"))?;
    let text = if out.stdout.is_empty() { out.stderr } else { out.stdout };
    let first = String::from_utf8_lossy(&text).lines().next().unwrap_or("").trim().to_owned();
    if out.status.success() { Ok(first) } else { Err(format!("{prog} failed: {first}")) }
}

pub fn run(a: LanguagesArgs) -> anyhow::Result<i32> {
    let rows: Vec<serde_json::Value> = koth_runner::language::all()
        .iter()
        .map(|l| {
            let v = version(&l.version);
            serde_json::json!({
                "name": l.name,
                "display": l.display,
                "extensions": l.extensions,
                "compiled": l.compile.is_some(),
                // Until language images exist, bots use the host's toolchains.
                "image": "host",
                "ready": v.is_ok(),
                "version": v.as_ref().ok(),
                "problem": v.as_ref().err(),
            })
        })
        .collect();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(0);
    }
    println!("{:<12} {:<24} {:<14} {:<6} {:<6} version", "language", "toolchain", "extensions", "image", "ready");
    for r in &rows {
        let exts: Vec<&str> = r["extensions"].as_array().unwrap().iter().filter_map(|e| e.as_str()).collect();
        println!(
            "{:<12} {:<24} {:<14} {:<6} {:<6} {}",
            r["name"].as_str().unwrap(),
            r["display"].as_str().unwrap(),
            exts.join(","),
            "host",
            if r["ready"].as_bool().unwrap() { "yes" } else { "no" },
            r["version"].as_str().or(r["problem"].as_str()).unwrap_or(""),
        );
    }
    Ok(0)
}
