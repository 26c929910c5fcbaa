//! Account administration outside a request: what a host's command line or
//! its own admin tooling does with Gatehouse's accounts (create a user, set a
//! password, issue, list and revoke API tokens, list and remove passkeys, end
//! sessions), under the same
//! password policy and storage rules as the screens. What changes an account's
//! access is recorded in the security activity log as the command line's.

use std::sync::Arc;

use rocket::figment::Figment;
use rocket::{Phase, Rocket};
use secrecy::{ExposeSecret, SecretString};
use time::OffsetDateTime;

use crate::auth::new_password::NewPasswords;
use crate::auth::oidc::Links;
use crate::auth::users::{self, CreateUserError};
use crate::auth::{passkeys, tokens, PasswordHasher};
use crate::config::HashAlgorithm;
use crate::db::Tx;
use crate::db::{Db, DbError};
use crate::domain::{Email, PasswordRejection, SecretToken};
use crate::events::{AuthEvent, Events, Origin};
use crate::session::{credential_change, end_every_session, Ending};
use crate::state::GatehouseState;
use crate::Settings;

/// Names, labels and display names hold 1 to this many characters.
const MAX_NAME_CHARS: usize = 255;

/// Gatehouse's accounts on one database, with the configured password policy.
///
/// ```no_run
/// # async fn demo() -> Result<(), gatehouse::AccountError> {
/// use gatehouse::{Accounts, Email};
/// let accounts = Accounts::open(&rocket::Config::figment()).await?;
/// let email = Email::parse("ada@example.org").expect("an address");
/// let id = accounts.add_user(&email, None, "a long passphrase of hers".into()).await?;
/// let token = accounts.create_token(&email, "deploy script").await?;
/// for listed in accounts.tokens(&email).await? {
///     println!("{} {}", listed.id, listed.name);
/// }
/// # let _ = (id, token); Ok(()) }
/// ```
pub struct Accounts {
    settings: Arc<Settings>,
    db: Db,
    events: Events,
}

/// A personal access token or a passkey as an operator sees it (never the
/// token or the key itself).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CredentialInfo {
    /// Its id (what [`Accounts::revoke_token`] or
    /// [`Accounts::remove_passkey`] takes).
    pub id: i64,
    /// Its label.
    pub name: String,
    /// When it was issued, if recorded.
    pub created_at: Option<OffsetDateTime>,
    /// When it was last presented (a token's recorded at most once a
    /// minute); `None` if never.
    pub last_used_at: Option<OffsetDateTime>,
}

impl CredentialInfo {
    /// `id` named `name`, with its times as stored (Unix seconds).
    fn at_unix(id: i64, name: String, created_at: i64, last_used_at: Option<i64>) -> Self {
        let at = |seconds: i64| OffsetDateTime::from_unix_timestamp(seconds).ok();
        Self {
            id,
            name,
            created_at: at(created_at),
            last_used_at: last_used_at.and_then(at),
        }
    }
}

/// A personal access token as an operator sees it.
pub type TokenInfo = CredentialInfo;

/// Why an account operation was refused or failed. The message names the
/// input at fault and never holds a password.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AccountError {
    /// The configuration is invalid (the message names the key).
    #[error("{0}")]
    Config(String),
    /// The database could not be opened or migrated.
    #[error("{0}")]
    Open(String),
    /// A display name or token label outside 1 to 255 characters.
    #[error("the {0} must have 1 to 255 characters")]
    Name(&'static str),
    /// The password could not be hashed (no hashing thread could start).
    #[error("{0}")]
    Hashing(String),
    /// The password breaks the password policy.
    #[error("{0}")]
    Password(String),
    /// An account with this address exists already.
    #[error("a user with email {0} already exists")]
    Duplicate(Email),
    /// No account has this address.
    #[error("no user with email {0}")]
    NoSuchUser(Email),
    /// No passkey has this id.
    #[error("no passkey with id {0}")]
    NoSuchPasskey(i64),
    /// No link to an OpenID provider has this id.
    #[error("no provider link with id {0}")]
    NoSuchLink(i64),
    /// No personal access token has this id.
    #[error("no token with id {0}")]
    NoSuchToken(i64),
    /// A statement failed.
    #[error("database error: {0}")]
    Database(#[from] DbError),
}

impl Accounts {
    /// Reads the configuration from `figment` (as the server does), opens
    /// `databases.main` and applies the migrations.
    pub async fn open(figment: &Figment) -> Result<Self, AccountError> {
        let settings =
            Settings::from_figment(figment).map_err(|e| AccountError::Config(e.to_string()))?;
        let db = Db::connect(&settings.database_url).await.map_err(|e| {
            AccountError::Open(format!("cannot open database `databases.main.url`: {e}"))
        })?;
        db.migrate()
            .await
            .map_err(|e| AccountError::Open(format!("database migration failed: {e}")))?;
        Ok(Self {
            settings: Arc::new(settings),
            events: Events::default().stored_in(db.clone()),
            db,
        })
    }

    /// The accounts of an attached Gatehouse, once its ignite has run (for
    /// a host fairing that runs after it); `None` before.
    pub fn of<P: Phase>(rocket: &Rocket<P>) -> Option<Self> {
        rocket.state::<GatehouseState>().map(|gh| Self {
            settings: gh.settings.clone(),
            db: gh.db.clone(),
            events: gh.events.clone(),
        })
    }

    /// The validated configuration these accounts follow.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// How many accounts exist.
    pub async fn count(&self) -> Result<u64, AccountError> {
        Ok(u64::try_from(users::count(&self.db).await?).unwrap_or_default())
    }

    /// Creates an account and answers its id. `name` defaults to the part
    /// of the address before `@`.
    pub async fn add_user(
        &self,
        email: &Email,
        name: Option<&str>,
        password: SecretString,
    ) -> Result<i64, AccountError> {
        let name = name.unwrap_or_else(|| email.as_str().split('@').next().unwrap_or_default());
        check_name("name", name)?;
        if users::find_by_email(&self.db, email).await?.is_some() {
            return Err(AccountError::Duplicate(email.clone()));
        }
        let hash = self.hash(password, &[email.as_str(), name]).await?;
        users::create(&self.db, name, email, &hash)
            .await
            .map_err(|e| match e {
                CreateUserError::Duplicate => AccountError::Duplicate(email.clone()),
                CreateUserError::Database(e) => e.into(),
            })
    }

    /// Replaces an account's password, in one transaction with every
    /// session, remember-me cookie and pending sign-in it ends (and a second
    /// step closed by failures opened again) and, unless
    /// `tokens.revoke_on_password_reset` is off, every personal access
    /// token; answers how many sessions were ended.
    pub async fn set_password(
        &self,
        email: &Email,
        password: SecretString,
    ) -> Result<u64, AccountError> {
        let user = self.user(email).await?;
        let hash = self.hash(password, &[email.as_str(), &user.name]).await?;
        let revoke_tokens = self.settings.tokens.revoke_on_password_reset;
        let new_password = async |tx: &mut Tx| {
            users::reset_password_in(tx, user.id, &hash).await?;
            if revoke_tokens {
                tokens::delete_for_user_in(tx, user.id).await?;
            }
            Ok::<(), DbError>(())
        };
        let ((), ended) = credential_change(&self.db, user.id, Ending::All, new_password).await?;
        self.emit(AuthEvent::PasswordChanged { user_id: user.id })
            .await;
        Ok(ended)
    }

    /// Ends every session of an account and voids its remember-me cookies;
    /// answers how many sessions were ended.
    pub async fn end_sessions(&self, email: &Email) -> Result<u64, AccountError> {
        let user = self.user(email).await?;
        let ended = self.end_sessions_of(user.id).await?;
        self.emit(AuthEvent::SessionEnded {
            user_id: user.id,
            ended,
        })
        .await;
        Ok(ended)
    }

    async fn end_sessions_of(&self, user_id: i64) -> Result<u64, AccountError> {
        Ok(end_every_session(&self.db, user_id).await?)
    }

    /// Issues a personal access token for the account; the token is
    /// answered once and only its SHA-256 digest is stored.
    pub async fn create_token(
        &self,
        email: &Email,
        label: &str,
    ) -> Result<SecretString, AccountError> {
        check_name("label", label)?;
        let user = self.user(email).await?;
        let token = SecretToken::generate();
        let token_id = tokens::create(&self.db, user.id, label, &token).await?;
        self.emit(AuthEvent::TokenCreated {
            user_id: user.id,
            token_id,
            name: label.to_owned(),
        })
        .await;
        Ok(SecretString::from(token.expose().to_owned()))
    }

    /// The personal access tokens of an account, oldest first.
    pub async fn tokens(&self, email: &Email) -> Result<Vec<TokenInfo>, AccountError> {
        let user = self.user(email).await?;
        let at = |seconds: Option<i64>| {
            seconds.and_then(|s| OffsetDateTime::from_unix_timestamp(s).ok())
        };
        Ok(tokens::of_user(&self.db, user.id)
            .await?
            .into_iter()
            .map(|token| TokenInfo {
                id: token.id,
                name: token.name,
                created_at: at(token.created_at),
                last_used_at: at(token.last_used_at),
            })
            .collect())
    }

    /// Revokes the personal access token `id`: from now on it signs
    /// nothing in.
    pub async fn revoke_token(&self, id: i64) -> Result<(), AccountError> {
        let user_id = tokens::owner(&self.db, id)
            .await?
            .ok_or(AccountError::NoSuchToken(id))?;
        if !tokens::delete(&self.db, id).await? {
            return Err(AccountError::NoSuchToken(id));
        }
        self.emit(AuthEvent::TokenRevoked {
            user_id,
            token_id: id,
        })
        .await;
        Ok(())
    }

    /// The passkeys of an account, oldest first.
    pub async fn passkeys(&self, email: &Email) -> Result<Vec<CredentialInfo>, AccountError> {
        let user = self.user(email).await?;
        Ok(passkeys::admin::list(&self.db, user.id)
            .await?
            .into_iter()
            .map(|p| CredentialInfo::at_unix(p.id, p.name, p.created_at, p.last_used_at))
            .collect())
    }

    /// Removes the passkey `id`: from now on it signs nobody in.
    pub async fn remove_passkey(&self, id: i64) -> Result<(), AccountError> {
        let (user_id, _) = passkeys::admin::remove(&self.db, id)
            .await?
            .ok_or(AccountError::NoSuchPasskey(id))?;
        self.emit(AuthEvent::PasskeyRemoved {
            user_id,
            passkey_id: id,
        })
        .await;
        Ok(())
    }

    /// The account's links to OpenID providers, oldest first (`name` is
    /// the provider's configured name).
    pub async fn oidc_links(&self, email: &Email) -> Result<Vec<CredentialInfo>, AccountError> {
        let user = self.user(email).await?;
        Ok(Links(&self.db)
            .of_user(user.id)
            .await?
            .into_iter()
            .map(|l| CredentialInfo::at_unix(l.id, l.provider, l.created_at, l.last_used_at))
            .collect())
    }

    /// Removes the link `id`: the provider's account signs nobody in any
    /// more (an operator may remove the last way in; a reset by mail sets a
    /// password).
    pub async fn unlink_oidc(&self, id: i64) -> Result<(), AccountError> {
        let link = Links(&self.db)
            .take(id)
            .await?
            .ok_or(AccountError::NoSuchLink(id))?;
        self.emit(AuthEvent::OidcUnlinked {
            user_id: link.user_id,
            provider: link.provider,
        })
        .await;
        Ok(())
    }

    async fn emit(&self, event: AuthEvent) {
        self.events.emit(event, &Origin::CommandLine).await;
    }

    async fn user(&self, email: &Email) -> Result<users::UserRecord, AccountError> {
        users::find_by_email(&self.db, email)
            .await?
            .ok_or_else(|| AccountError::NoSuchUser(email.clone()))
    }

    /// Checks `raw` against the policy and hashes it on a thread of its own.
    async fn hash(&self, raw: SecretString, hints: &[&str]) -> Result<String, AccountError> {
        let auth = &self.settings.auth;
        let password = NewPasswords::new(auth)
            .map_err(AccountError::Config)?
            .check(raw.expose_secret().to_owned(), hints)
            .map_err(|rejection| AccountError::Password(self.explain(rejection)))?;
        PasswordHasher::new(auth.hash, 0)
            .map_err(|e| AccountError::Hashing(format!("cannot start a hashing thread: {e}")))?
            .hash(&SecretString::from(password.expose().to_owned()))
            .await
            .map_err(AccountError::Hashing)
    }

    fn explain(&self, rejection: PasswordRejection) -> String {
        let auth = &self.settings.auth;
        match rejection {
            PasswordRejection::TooShort => format!(
                "the password must have at least {} characters",
                auth.password_min_length
            ),
            PasswordRejection::TooLong => match auth.hash {
                HashAlgorithm::Bcrypt => {
                    "the password must have at most 128 characters and 72 bytes".into()
                }
                HashAlgorithm::Argon2id => "the password must have at most 128 characters".into(),
            },
            PasswordRejection::TooCommon => {
                "the password is too common or too easy to guess".into()
            }
            PasswordRejection::Breached => {
                "the password appears in a breach of another service: choose another".into()
            }
        }
    }
}

fn check_name(what: &'static str, name: &str) -> Result<(), AccountError> {
    if name.trim().is_empty() || name.chars().count() > MAX_NAME_CHARS {
        return Err(AccountError::Name(what));
    }
    Ok(())
}
