//! Security notices mailed to an account's owner: a sign-in from a new
//! device, two-factor on or off, recovery codes renewed, a passkey added or
//! removed. Mail leaves off the request path; a notice that cannot be
//! composed or addressed is logged and never fails the request.

use time::macros::format_description;
use time::OffsetDateTime;

use crate::events::Origin;
use crate::i18n::Language;
use crate::mail::{mailbox, Notice};
use crate::screens::Screen;
use crate::session::AuthUser;
use crate::state::GatehouseState;

/// The owner of an account, as a mail addresses them.
pub struct Recipient<'a> {
    /// Display name.
    pub name: &'a str,
    /// Address.
    pub email: &'a str,
}

/// The signed-in user as a [`Recipient`].
pub fn recipient(user: &AuthUser) -> Recipient<'_> {
    Recipient {
        name: &user.name,
        email: &user.email,
    }
}

/// Mails `notice` to `to` in `language`, pointing at the account screen.
pub fn notify(gh: &GatehouseState, to: Recipient<'_>, language: Language, notice: &Notice) {
    let account = gh.settings.absolute(Screen::Account.path());
    let sent = gh
        .composer
        .notice(language, to.name, notice, &account)
        .and_then(|mail| mailbox(to.name, to.email).map(|to| gh.mailer.send(to, mail)));
    if let Err(e) = sent {
        tracing::error!(error = %e, "security notice not sent");
    }
}

/// The notice of a sign-in from a new device, from the request's origin.
pub fn new_device(from: &Origin) -> Notice {
    let time = OffsetDateTime::now_utc()
        .format(format_description!("[year]-[month]-[day] [hour]:[minute]"))
        .unwrap_or_default();
    let ip = from.ip().map(|ip| ip.to_string()).unwrap_or_default();
    Notice::NewDevice {
        time,
        ip,
        browser: browser(from.user_agent()),
    }
}

/// "Chrome 131.0 on Linux" from a `User-Agent`; the header itself (cut)
/// when it names no known browser.
fn browser(user_agent: Option<&str>) -> String {
    const UNKNOWN: &str = "UNKNOWN";
    let Some(agent) = user_agent.filter(|a| !a.trim().is_empty()) else {
        return "-".to_owned();
    };
    match woothee::parser::Parser::new().parse(agent) {
        Some(found) if found.name != UNKNOWN => {
            let version = found.version.split('.').take(2).collect::<Vec<_>>().join(".");
            let name = if version.is_empty() || version == UNKNOWN {
                found.name.to_owned()
            } else {
                format!("{} {version}", found.name)
            };
            if found.os == UNKNOWN {
                name
            } else {
                format!("{name} on {}", found.os)
            }
        }
        _ => agent.chars().take(120).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::browser;

    #[test]
    fn browsers_are_named_from_their_user_agent() {
        let chrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) \
                      Chrome/131.0.6778.85 Safari/537.36";
        assert_eq!(browser(Some(chrome)), "Chrome 131.0 on Linux");
        assert!(browser(Some("curl/8.5.0")).contains("curl"));
        let unknown = "x".repeat(300);
        assert_eq!(browser(Some(&unknown)).len(), 120, "an unknown agent, cut");
        assert_eq!(browser(None), "-");
    }
}
