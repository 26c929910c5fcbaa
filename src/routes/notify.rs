//! Security notices mailed to an account's owner: a sign-in from a new
//! device, two-factor on or off, recovery codes renewed, a passkey added or
//! removed. Mail leaves off the request path; a notice that cannot be
//! composed or addressed is logged and never fails the request.

use time::macros::format_description;
use time::OffsetDateTime;

use rocket::request::Request;

use crate::auth::users;
use crate::events::{agent, AuthEvent, Origin};
use crate::i18n::Language;
use crate::mail::{mailbox, Notice};
use crate::screens::Screen;
use crate::session::{AuthUser, RecallNotice};
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

/// Tells owners what the recalls of `req` found (a recall on a new
/// device, a copied cookie): the `remember_theft` event and the mails, in
/// the request's language. Never fails the request.
pub async fn recall_notices(gh: &GatehouseState, req: &Request<'_>, notices: Vec<RecallNotice>) {
    if notices.is_empty() {
        return;
    }
    let Some(from) = req.guard::<Origin>().await.succeeded() else {
        return;
    };
    let language = req.guard::<Language>().await.succeeded().unwrap_or_default();
    for notice in notices {
        let (user_id, mail) = match notice {
            RecallNotice::NewDevice { user_id } => (user_id, new_device(&from)),
            RecallNotice::Theft { user_id } => {
                gh.events.emit(AuthEvent::RememberTheft { user_id }, &from).await;
                (user_id, Notice::RememberTheft)
            }
        };
        match users::find_by_id(&gh.db, user_id).await {
            Ok(Some(user)) => notify(gh, Recipient { name: &user.name, email: &user.email }, language, &mail),
            Ok(None) => {}
            Err(e) => tracing::error!(error = %e, "security notice not sent"),
        }
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
        browser: agent::browser(from.user_agent()),
    }
}
