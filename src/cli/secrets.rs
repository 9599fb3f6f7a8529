//! Secrets read from files: the database password and the host's token,
//! as Docker mounts a service's secrets (`/run/secrets/<name>`, see
//! `docker/stack.yml`), so neither is in an environment variable, a command
//! line or a volume.
//!
//! `--database-password-file` (`KOTH_DATABASE_PASSWORD_FILE`) on `koth web`,
//! `koth scheduler` and `koth runner` puts the file's password into the
//! database URL; `--host-token-file` (`KOTH_HOST_TOKEN_FILE`) on `koth web`
//! makes the file's token the `host` account's.

use std::path::Path;

/// The first line of a secret file, without its line ending. A missing,
/// unreadable or empty file is an error saying which file, which option
/// named it, and where a swarm puts secrets.
pub fn read_secret(path: &Path, what: &str, option: &str) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        anyhow::anyhow!(
            "reading {what} from {} ({option}): {e}; give the file, or in a swarm the service's secret, which Docker mounts at \
             /run/secrets/<name> (docker/stack.yml)",
            path.display()
        )
    })?;
    secret_line(&text).map(str::to_owned).ok_or_else(|| anyhow::anyhow!("{} ({option}) holds no {what}: it is empty", path.display()))
}

/// A secret file's text to the secret: its first line without the line
/// ending (`echo secret > file` and `printf secret > file` give the same);
/// `None` if that is empty.
pub fn secret_line(text: &str) -> Option<&str> {
    let line = text.split('\n').next().unwrap_or("");
    let line = line.strip_suffix('\r').unwrap_or(line);
    (!line.is_empty()).then_some(line)
}

/// `url` (`postgres://user[:old]@host/db`) with `password` as its
/// password, percent-encoded.
pub fn url_with_password(url: &str, password: &str) -> Result<String, String> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| format!("the database URL {:?} is not of the form postgres://user@host/database", redact(url)))?;
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let (userinfo, hostport) = authority.rsplit_once('@').ok_or_else(|| {
        format!("the database URL {:?} names no user (postgres://user@host/database) to give the password to", redact(url))
    })?;
    let user = userinfo.split_once(':').map_or(userinfo, |(u, _)| u);
    if user.is_empty() {
        return Err(format!("the database URL {:?} names no user (postgres://user@host/database)", redact(url)));
    }
    let mut encoded = String::new();
    for b in password.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            encoded.push(b as char);
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    Ok(format!("{scheme}://{user}:{encoded}@{hostport}{tail}"))
}

/// `url` with its password, if any, hidden (for error messages).
fn redact(url: &str) -> String {
    match (url.split_once("://"), url.rfind('@')) {
        (Some((scheme, rest)), Some(_)) => {
            let (userinfo, after) = rest.rsplit_once('@').unwrap_or(("", rest));
            let user = userinfo.split_once(':').map_or(userinfo, |(u, _)| u);
            format!("{scheme}://{user}:***@{after}")
        }
        _ => url.to_owned(),
    }
}

/// The database URL a service connects with: `url`, with the password of
/// `password_file` if one is given.
pub fn database_url(url: &str, password_file: Option<&Path>) -> anyhow::Result<String> {
    match password_file {
        None => Ok(url.to_owned()),
        Some(f) => {
            let password = read_secret(f, "the database password", "--database-password-file, KOTH_DATABASE_PASSWORD_FILE")?;
            url_with_password(url, &password).map_err(|e| anyhow::anyhow!(e))
        }
    }
}

/// A host token given by the host (a secret file): 32 to 256 letters,
/// digits, `-` or `_`, as `openssl rand -hex 32` makes.
pub fn check_host_token(token: &str) -> Result<(), String> {
    let ok_chars = token.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !(32..=256).contains(&token.len()) || !ok_chars {
        return Err(format!(
            "the host token file holds {} characters{}: a host token is 32 to 256 letters, digits, '-' or '_' (make one with \
             `openssl rand -hex 32`)",
            token.len(),
            if ok_chars { "" } else { ", some of them not letters, digits, '-' or '_'" }
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_files_read_to_their_first_line() {
        for (text, secret) in [
            ("s3cret\n", Some("s3cret")),
            ("s3cret", Some("s3cret")),
            ("s3cret\r\n", Some("s3cret")),
            ("s3cret\nignored\n", Some("s3cret")),
            (" spaced out \n", Some(" spaced out ")),
            ("", None),
            ("\n", None),
            ("\r\n", None),
        ] {
            assert_eq!(secret_line(text), secret, "{text:?}");
        }
    }

    #[test]
    fn the_password_goes_into_the_url_encoded() {
        for (url, password, want) in [
            ("postgres://koth@db/koth", "pw", Ok("postgres://koth:pw@db/koth")),
            ("postgres://koth:old@db/koth", "new", Ok("postgres://koth:new@db/koth")),
            (
                "postgres://koth@db:5433/koth?sslmode=disable",
                "p@ss:w/rd ?#%",
                Ok("postgres://koth:p%40ss%3Aw%2Frd%20%3F%23%25@db:5433/koth?sslmode=disable"),
            ),
            ("postgresql://koth@db", "x", Ok("postgresql://koth:x@db")),
            ("postgres://db/koth", "x", Err("names no user")),
            ("postgres://:old@db/koth", "x", Err("names no user")),
            ("db/koth", "x", Err("is not of the form")),
        ] {
            match (url_with_password(url, password), want) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{url}"),
                (Err(e), Err(part)) => {
                    assert!(e.contains(part), "{url}: {e}");
                    assert!(!e.contains("old"), "{url}: the old password is not shown: {e}");
                }
                (got, want) => panic!("{url}: {got:?}, wanted {want:?}"),
            }
        }
    }

    #[test]
    fn host_tokens_are_long_and_plain() {
        for (token, ok) in [
            ("0123456789abcdef0123456789abcdef", true),
            (&"a".repeat(256), true),
            ("A-b_C-d_0123456789012345678901234", true),
            ("short", false),
            (&"a".repeat(257), false),
            ("0123456789abcdef0123456789abcde f", false),
            ("0123456789abcdef0123456789abcdéf", false),
        ] {
            assert_eq!(check_host_token(token).is_ok(), ok, "{token}");
        }
    }

    #[test]
    fn a_missing_or_empty_secret_file_says_which_and_how() {
        let dir = std::env::temp_dir().join(format!("koth-secrets-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("missing");
        let e = read_secret(&missing, "the database password", "--database-password-file").unwrap_err().to_string();
        assert!(e.contains(&missing.display().to_string()) && e.contains("--database-password-file") && e.contains("/run/secrets"), "{e}");
        let empty = dir.join("empty");
        std::fs::write(&empty, "\n").unwrap();
        let e = read_secret(&empty, "the database password", "--database-password-file").unwrap_err().to_string();
        assert!(e.contains("empty"), "{e}");
        let good = dir.join("good");
        std::fs::write(&good, "pw\n").unwrap();
        assert_eq!(database_url("postgres://koth@db/koth", Some(&good)).unwrap(), "postgres://koth:pw@db/koth");
        assert_eq!(database_url("postgres://koth@db/koth", None).unwrap(), "postgres://koth@db/koth");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
