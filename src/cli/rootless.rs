//! `koth rootless allow USER` / `koth rootless revoke USER`: the
//! administrator's step of rootless play on cgroup v1, done once: the
//! cgroups the user's `koth match` makes its boxes in, handed to the user
//! ([`koth_sandbox::cgroup::user`]). koth run by that user enters them by
//! itself. On cgroup v2 there is no such step for root (systemd delegates
//! a scope to the user), and the command says so.

use anyhow::bail;
use clap::Subcommand;

#[derive(Subcommand)]
#[command(defer = true)]
pub enum RootlessCommand {
    /// As root, once: make the cgroups USER's `koth match` needs (cgroup v1) and hand them to USER.
    Allow {
        /// The user: a name, or a uid (its group: the user's own, else the same number).
        user: String,
    },
    /// As root: remove the cgroups `allow` made for USER.
    Revoke {
        /// The user: a name, or a uid.
        user: String,
    },
}

/// The user's uid and primary gid, from a name or a number.
fn user_ids(user: &str) -> anyhow::Result<(u32, u32, String)> {
    let number = user.parse::<u32>().ok();
    match (passwd_entry(user, number)?, number) {
        (Some((uid, gid)), _) => Ok((uid, gid, user.to_owned())),
        (None, Some(uid)) => Ok((uid, uid, format!("uid {uid}"))),
        (None, None) => bail!("there is no user named {user:?} on this machine (give a name from /etc/passwd, or a uid)"),
    }
}

/// The passwd entry's uid and gid of a name, or of a uid.
fn passwd_entry(name: &str, uid: Option<u32>) -> anyhow::Result<Option<(u32, u32)>> {
    let cname = std::ffi::CString::new(name)?;
    let mut buf = vec![0 as libc::c_char; 16 << 10];
    // SAFETY: all-zero is a valid passwd (null pointers, zero ids).
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call, and the buffer's length is given.
    let rc = unsafe {
        match uid {
            Some(uid) => libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut found),
            None => libc::getpwnam_r(cname.as_ptr(), &mut pwd, buf.as_mut_ptr(), buf.len(), &mut found),
        }
    };
    if rc != 0 {
        bail!("looking up user {name:?}: {}", std::io::Error::from_raw_os_error(rc));
    }
    Ok((!found.is_null()).then_some((pwd.pw_uid, pwd.pw_gid)))
}

/// Exit code for a command given wrongly (not root, no such user), as
/// clap's own; a host whose cgroups koth cannot use is the sandbox's 210.
const EXIT_USAGE: i32 = 2;

pub fn run(cmd: RootlessCommand) -> anyhow::Result<i32> {
    let user = match &cmd {
        RootlessCommand::Allow { user } | RootlessCommand::Revoke { user } => user.clone(),
    };
    let usage = |why: String| {
        eprintln!("koth: error: {why}");
        Ok(EXIT_USAGE)
    };
    if !koth_sandbox::Privilege::current().is_root() {
        return usage("this is the administrator's step: run it as root (sudo koth rootless ...)".into());
    }
    let (uid, gid, name) = match user_ids(&user) {
        Ok(ids) => ids,
        Err(e) => return usage(format!("{e:#}")),
    };
    if uid == 0 {
        return usage("root needs no cgroups handed to it: koth run as root makes its own".into());
    }
    match cmd {
        RootlessCommand::Allow { .. } => {
            let dirs = koth_sandbox::cgroup::user::allow(uid, gid).map_err(|e| anyhow::anyhow!("{e}"))?;
            println!("{name} may now run `koth match` without root: these cgroups are theirs, and koth enters them by itself:");
            for d in &dirs {
                println!("  {}", d.display());
            }
            println!("undo with `koth rootless revoke {user}`");
        }
        RootlessCommand::Revoke { .. } => {
            let dirs = koth_sandbox::cgroup::user::revoke(uid).map_err(|e| anyhow::anyhow!("{e}"))?;
            if dirs.is_empty() {
                println!("{name} had no cgroups from `koth rootless allow`");
            } else {
                println!("removed {name}'s cgroups:");
                for d in &dirs {
                    println!("  {}", d.display());
                }
            }
        }
    }
    Ok(0)
}
