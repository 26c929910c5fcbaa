//! Setting a signed-in user's new password, the same way wherever it is
//! chosen (`POST /auth/password`, the `password_change` intent): one
//! transaction with everything the old one kept signed in, then the event
//! and the "password changed" mail, which a reset by mail sends too. It
//! declares no route.

use secrecy::SecretString;

use super::posting::{AccountRequest, Keeping};
use crate::auth::oidc::Links;
use crate::auth::users;
use crate::db::Tx;
use crate::domain::Password;
use crate::error::AuthError;
use crate::events::AuthEvent;
use crate::i18n::Language;
use crate::mail::mailbox;
use crate::screens::Screen;
use crate::state::GatehouseState;

/// Sets `password` as the caller's new one, in one transaction with every
/// session of theirs, every remember cookie and every pending second step it
/// ends (and the breached mark it clears); this browser stays signed in
/// under an id minted now, with a new remember cookie if it had one; the
/// event is recorded and the "password changed" mail goes out.
pub async fn set_new_password(
    caller: &AccountRequest<'_>,
    gh: &GatehouseState,
    password: &Password,
) -> Result<(), AuthError> {
    let user = &caller.who;
    let hash = gh
        .hasher
        .hash(&SecretString::from(password.expose().to_owned()))
        .await
        .map_err(AuthError::Internal)?;
    let new_password = async |tx: &mut Tx| users::set_password_hash_in(tx, user.id, &hash).await;
    caller
        .change_credentials(gh, Keeping::NoneButThisBrowser, new_password)
        .await?;
    let changed = AuthEvent::PasswordChanged { user_id: user.id };
    gh.events.emit(changed, &caller.from).await;
    send_password_changed(gh, caller.language, user.id, &user.name, &user.email).await;
    Ok(())
}

/// Sends the "password changed" notice, which links to the forgot-password
/// screen in case it was not the user and names every OpenID provider that
/// can also sign the account in (with the account screen, to unlink one); a
/// failure is logged.
pub async fn send_password_changed(
    gh: &GatehouseState,
    language: Language,
    user_id: i64,
    name: &str,
    email: &str,
) {
    let forgot = gh.settings.absolute(Screen::ForgotPassword.path());
    let account = gh.settings.absolute(Screen::Account.path());
    let providers: Vec<(String, String)> = match Links(&gh.db).of_user(user_id).await {
        Ok(links) => links
            .into_iter()
            .map(|link| {
                let label = gh
                    .oidc
                    .get(&link.provider)
                    .map_or(link.provider, |p| p.settings.label.clone());
                (label, account.clone())
            })
            .collect(),
        Err(e) => {
            tracing::warn!(error = %e, "the providers of a password-changed mail were not read");
            Vec::new()
        }
    };
    let sent = gh
        .composer
        .password_changed(language, name, &forgot, &providers)
        .and_then(|mail| mailbox(name, email).map(|to| gh.mailer.send(to, mail)));
    if let Err(e) = sent {
        tracing::error!(error = %e, "password-changed mail not sent");
    }
}
