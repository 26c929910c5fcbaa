//! Passkeys (WebAuthn) through webauthn-rs: registering one on the account
//! screen, signing in with one alone (a discoverable credential, verified
//! user: both factors), or answering the second step with one.
//!
//! The relying party is `base_url`'s host. A ceremony's state (its
//! challenge) is kept server-side by the caller and used once; this module
//! starts and finishes ceremonies and keeps the credentials.

mod store;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use url::Url;
use webauthn_rs::prelude::{
    CreationChallengeResponse, DiscoverableAuthentication, Passkey,
    PasskeyAuthentication, PasskeyRegistration, PublicKeyCredential, RegisterPublicKeyCredential,
    RequestChallengeResponse, Uuid, WebauthnError,
};
use webauthn_rs::{Webauthn, WebauthnBuilder};
use webauthn_rs_proto::ResidentKeyRequirement;

use crate::clock::unix_now;
use crate::db::{Db, DbError};

pub use store::StoredPasskey;

/// The longest name a passkey may be given.
pub const MAX_NAME_CHARS: usize = 64;

/// Why a passkey ceremony did not complete.
#[derive(Debug, thiserror::Error)]
pub enum PasskeyError {
    /// Passkeys are off (`base_url` names no host name).
    #[error("passkeys are off")]
    Off,
    /// The credential was not accepted: unknown, not the expected user's,
    /// for another origin or relying party, a used or foreign challenge, a
    /// bad signature, no user verification, already registered.
    #[error("passkey not accepted")]
    Refused,
    /// The signature counter went backwards: the authenticator may have been
    /// cloned. Refused, and worth recording.
    #[error("passkey {passkey_id} of user {user_id}: signature counter went backwards")]
    CounterWentBack {
        /// The owner.
        user_id: i64,
        /// `gatehouse_passkeys.id`.
        passkey_id: i64,
    },
    /// The database failed.
    #[error("database: {0}")]
    Database(#[from] DbError),
    /// A stored record or a ceremony state could not be read or written.
    #[error("passkey record: {0}")]
    Record(String),
}

/// Why passkeys cannot be on for a `base_url`, if they cannot.
pub fn off_reason(base_url: &Url) -> Option<&'static str> {
    match base_url.host() {
        Some(url::Host::Domain(_)) => None,
        Some(_) => Some("base_url names an IP address, which WebAuthn refuses as a relying party"),
        None => Some("base_url names no host"),
    }
}

/// A passkey as its owner sees it in the list.
#[derive(Debug, Clone, Serialize)]
pub struct PasskeySummary {
    /// `gatehouse_passkeys.id`.
    pub id: i64,
    /// The name its owner gave it.
    pub name: String,
    /// Unix seconds it was added.
    pub created_at: i64,
    /// Unix seconds it last signed in, if ever.
    pub last_used_at: Option<i64>,
}

impl From<&StoredPasskey> for PasskeySummary {
    fn from(stored: &StoredPasskey) -> Self {
        Self {
            id: stored.id,
            name: stored.name.clone(),
            created_at: stored.created_at,
            last_used_at: stored.last_used_at,
        }
    }
}

/// The server's half of a registration: kept in the session until the
/// authenticator answers.
#[derive(Serialize, Deserialize)]
pub struct Registration {
    user_id: i64,
    user_handle: String,
    state: PasskeyRegistration,
}

/// The server's half of a sign-in: a discoverable one (any user), or the
/// second step of one user's sign-in. Its state is private to this module:
/// only [`Passkeys::start_sign_in`] and [`Passkeys::start_second_step`]
/// make one, and only a reserved second-factor check finishes a second
/// step's.
#[derive(Serialize, Deserialize)]
pub struct Assertion(Ceremony);

#[derive(Serialize, Deserialize)]
enum Ceremony {
    /// Passwordless: the credential names its user.
    Discoverable(DiscoverableAuthentication),
    /// The second step: one of `user_id`'s passkeys.
    SecondStep {
        /// The pending user.
        user_id: i64,
        /// The challenge, listing their credentials.
        state: PasskeyAuthentication,
    },
}

impl Assertion {
    /// Whether this is the second step of `user_id`'s sign-in.
    pub fn is_second_step_of(&self, user_id: i64) -> bool {
        matches!(self.0, Ceremony::SecondStep { user_id: of, .. } if of == user_id)
    }
}

/// A verified passkey sign-in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verified {
    /// The account signed in.
    pub user_id: i64,
    /// `gatehouse_passkeys.id`.
    pub passkey_id: i64,
}

/// Passkeys of every user, and the relying party they belong to.
pub struct Passkeys {
    webauthn: Option<Webauthn>,
    db: Db,
}

impl Passkeys {
    /// The relying party of `base_url` named `rp_name`; off (every call
    /// [`PasskeyError::Off`]) when `base_url` names an IP address.
    pub fn new(db: Db, base_url: &Url, rp_name: &str) -> Result<Self, String> {
        if off_reason(base_url).is_some() {
            return Ok(Self { webauthn: None, db });
        }
        let rp_id = base_url.host_str().unwrap_or_default();
        let mut origin = base_url.clone();
        origin.set_path("");
        let webauthn = WebauthnBuilder::new(rp_id, &origin)
            .map(|builder| builder.rp_name(rp_name))
            .and_then(WebauthnBuilder::build)
            .map_err(|e| format!("passkeys for {base_url}: {e}"))?;
        Ok(Self {
            webauthn: Some(webauthn),
            db,
        })
    }

    /// Whether passkeys are offered.
    pub fn is_on(&self) -> bool {
        self.webauthn.is_some()
    }

    fn webauthn(&self) -> Result<&Webauthn, PasskeyError> {
        self.webauthn.as_ref().ok_or(PasskeyError::Off)
    }

    /// `user_id`'s passkeys, oldest first.
    pub async fn list(&self, user_id: i64) -> Result<Vec<PasskeySummary>, PasskeyError> {
        self.webauthn()?;
        let stored = store::of_user(&self.db, user_id).await?;
        Ok(stored.iter().map(PasskeySummary::from).collect())
    }

    /// The creation options for a new passkey of `user_id` (a resident
    /// credential with user verification, none of theirs again) and the
    /// state to keep until the authenticator answers.
    pub async fn start_registration(
        &self,
        user_id: i64,
        email: &str,
        name: &str,
    ) -> Result<(Value, Registration), PasskeyError> {
        let webauthn = self.webauthn()?;
        let existing = store::of_user(&self.db, user_id).await?;
        let user_handle = existing
            .first()
            .map(|p| p.user_handle.clone())
            .unwrap_or_else(|| Uuid::new_v4().to_string());
        let handle = Uuid::parse_str(&user_handle).map_err(|e| PasskeyError::Record(e.to_string()))?;
        let exclude = existing
            .iter()
            .map(|p| parse_passkey(&p.passkey).map(|k| k.cred_id().clone()))
            .collect::<Result<Vec<_>, _>>()?;
        let (options, state) = webauthn
            .start_passkey_registration(handle, email, name, Some(exclude))
            .map_err(|e| PasskeyError::Record(e.to_string()))?;
        let options = resident(options);
        let options = serde_json::to_value(options).map_err(|e| PasskeyError::Record(e.to_string()))?;
        Ok((options, Registration { user_id, user_handle, state }))
    }

    /// Verifies the authenticator's answer to `registration` for `user_id`
    /// and stores the passkey under `name`.
    pub async fn finish_registration(
        &self,
        user_id: i64,
        name: &str,
        credential: &Value,
        registration: Registration,
    ) -> Result<PasskeySummary, PasskeyError> {
        let webauthn = self.webauthn()?;
        if registration.user_id != user_id {
            return Err(PasskeyError::Refused);
        }
        let credential: RegisterPublicKeyCredential =
            serde_json::from_value(credential.clone()).map_err(|_| PasskeyError::Refused)?;
        let passkey = webauthn
            .finish_passkey_registration(&credential, &registration.state)
            .map_err(refused)?;
        let hash = credential_hash(passkey.cred_id());
        if store::by_credential(&self.db, &hash).await?.is_some() {
            return Err(PasskeyError::Refused);
        }
        let record = serde_json::to_string(&passkey).map_err(|e| PasskeyError::Record(e.to_string()))?;
        let now = unix_now();
        let id = store::insert(
            &self.db,
            user_id,
            &hash,
            &registration.user_handle,
            name,
            &record,
            now,
        )
        .await?;
        Ok(PasskeySummary {
            id,
            name: name.to_owned(),
            created_at: now,
            last_used_at: None,
        })
    }

    /// Request options for a passwordless sign-in (any user's discoverable
    /// credential; conditional mediation) and the state to keep.
    pub fn start_sign_in(&self) -> Result<(Value, Assertion), PasskeyError> {
        let (options, state) = self
            .webauthn()?
            .start_discoverable_authentication()
            .map_err(|e| PasskeyError::Record(e.to_string()))?;
        Ok((options_json(options)?, Assertion(Ceremony::Discoverable(state))))
    }

    /// Request options for the second step of `user_id`'s sign-in: their
    /// own credentials only. `None` when they have no passkey.
    pub async fn start_second_step(
        &self,
        user_id: i64,
    ) -> Result<Option<(Value, Assertion)>, PasskeyError> {
        let webauthn = self.webauthn()?;
        let keys = store::of_user(&self.db, user_id)
            .await?
            .iter()
            .map(|p| parse_passkey(&p.passkey))
            .collect::<Result<Vec<_>, _>>()?;
        if keys.is_empty() {
            return Ok(None);
        }
        let (options, state) = webauthn
            .start_passkey_authentication(&keys)
            .map_err(|e| PasskeyError::Record(e.to_string()))?;
        Ok(Some((
            options_json(options)?,
            Assertion(Ceremony::SecondStep { user_id, state }),
        )))
    }

    /// Verifies an authenticator's answer to `assertion`: the credential is
    /// a stored one (of the pending user, for a second step; for a
    /// passwordless sign-in, its `userHandle` names the credential's user),
    /// the signature over this challenge, origin and relying party holds,
    /// the user was verified and the counter moved forward. The new counter
    /// and the time are stored by the statement that checks the counter
    /// did not move meanwhile (stored and reported 0 never count).
    ///
    /// A passwordless sign-in only: a second step's assertion is finished
    /// by [`Passkeys::finish_second_step`], under a reserved check.
    pub async fn finish_sign_in(
        &self,
        credential: &Value,
        assertion: Assertion,
    ) -> Result<Verified, PasskeyError> {
        match assertion.0 {
            Ceremony::Discoverable(_) => self.finish(credential, assertion).await,
            Ceremony::SecondStep { .. } => Err(PasskeyError::Refused),
        }
    }

    /// [`Passkeys::finish_sign_in`] for a second step's assertion; called
    /// only by a reserved second-factor check.
    pub(in crate::auth) async fn finish_second_step(
        &self,
        credential: &Value,
        assertion: Assertion,
    ) -> Result<Verified, PasskeyError> {
        match assertion.0 {
            Ceremony::SecondStep { .. } => self.finish(credential, assertion).await,
            Ceremony::Discoverable(_) => Err(PasskeyError::Refused),
        }
    }

    async fn finish(&self, credential: &Value, assertion: Assertion) -> Result<Verified, PasskeyError> {
        let webauthn = self.webauthn()?;
        let credential: PublicKeyCredential =
            serde_json::from_value(credential.clone()).map_err(|_| PasskeyError::Refused)?;
        let hash = credential_hash(credential.get_credential_id());
        let stored = store::by_credential(&self.db, &hash)
            .await?
            .ok_or(PasskeyError::Refused)?;
        let mut passkey = parse_passkey(&stored.passkey)?;
        let counted = |error: WebauthnError| match error {
            WebauthnError::CredentialPossibleCompromise => PasskeyError::CounterWentBack {
                user_id: stored.user_id,
                passkey_id: stored.id,
            },
            other => refused(other),
        };
        let result = match assertion.0 {
            Ceremony::Discoverable(state) => {
                // The credential id alone names no user: the authenticator
                // must also say whose credential it signed with.
                let handle = user_handle_of(&credential);
                if handle.as_deref() != Some(stored.user_handle.as_str()) {
                    return Err(PasskeyError::Refused);
                }
                webauthn
                    .finish_discoverable_authentication_v2(&credential, state, &passkey)
                    .map_err(counted)?
            }
            Ceremony::SecondStep { user_id, state } => {
                if user_id != stored.user_id {
                    return Err(PasskeyError::Refused);
                }
                webauthn
                    .finish_passkey_authentication(&credential, &state)
                    .map_err(counted)?
            }
        };
        if !result.user_verified() {
            return Err(PasskeyError::Refused);
        }
        let uncounted = result.counter() == 0 && stored_counter(&stored.passkey) == Some(0);
        passkey.update_credential(&result);
        let record = serde_json::to_string(&passkey).map_err(|e| PasskeyError::Record(e.to_string()))?;
        let now = unix_now();
        if !store::used(&self.db, stored.id, &stored.passkey, &record, uncounted, now).await? {
            // Another assertion was recorded since this one's record was
            // read: its counter value is spent (a clone at work), unless
            // the passkey was removed meanwhile.
            return match store::by_credential(&self.db, &hash).await? {
                Some(_) => Err(counted(WebauthnError::CredentialPossibleCompromise)),
                None => Err(PasskeyError::Refused),
            };
        }
        Ok(Verified {
            user_id: stored.user_id,
            passkey_id: stored.id,
        })
    }

    /// Removes `user_id`'s passkey `id`; answers its name, `None` when it is
    /// not theirs.
    pub async fn remove(&self, user_id: i64, id: i64) -> Result<Option<String>, PasskeyError> {
        self.webauthn()?;
        let Some(found) = store::find(&self.db, user_id, id).await? else {
            return Ok(None);
        };
        store::delete(&self.db, found.id).await?;
        Ok(Some(found.name))
    }
}

/// The command line's view: any user's passkeys, removal by id, whether or
/// not `base_url` offers passkeys.
pub mod admin {
    use super::{store, PasskeySummary};
    use crate::db::{Db, DbError};

    /// `user_id`'s passkeys.
    pub async fn list(db: &Db, user_id: i64) -> Result<Vec<PasskeySummary>, DbError> {
        let stored = store::of_user(db, user_id).await?;
        Ok(stored.iter().map(PasskeySummary::from).collect())
    }

    /// Removes passkey `id`; answers its owner and name, `None` when there
    /// is none.
    pub async fn remove(db: &Db, id: i64) -> Result<Option<(i64, String)>, DbError> {
        let Some(found) = store::by_id(db, id).await? else {
            return Ok(None);
        };
        store::delete(db, found.id).await?;
        Ok(Some((found.user_id, found.name)))
    }
}

/// Asks for a resident (discoverable) credential, so that the passkey can
/// sign in without an address; webauthn-rs' passkey options leave it to the
/// authenticator.
fn resident(mut options: CreationChallengeResponse) -> CreationChallengeResponse {
    if let Some(selection) = options.public_key.authenticator_selection.as_mut() {
        selection.resident_key = Some(ResidentKeyRequirement::Required);
        selection.require_resident_key = true;
    }
    options
}

fn options_json(options: RequestChallengeResponse) -> Result<Value, PasskeyError> {
    serde_json::to_value(options).map_err(|e| PasskeyError::Record(e.to_string()))
}

/// The signature counter in webauthn-rs' record of a passkey (its
/// credential's `counter`, which the crate keeps to itself).
fn stored_counter(record: &str) -> Option<u64> {
    let record: Value = serde_json::from_str(record).ok()?;
    record["cred"]["counter"].as_u64()
}

fn parse_passkey(record: &str) -> Result<Passkey, PasskeyError> {
    serde_json::from_str(record).map_err(|e| PasskeyError::Record(e.to_string()))
}

/// The SHA-256 (hex) a credential id is stored and found by.
pub fn credential_hash(credential_id: &[u8]) -> String {
    hex::encode(Sha256::digest(credential_id))
}

/// The user an assertion's `userHandle` names, as
/// `gatehouse_passkeys.user_handle` keeps it (a hyphenated UUID): `None`
/// when it names none or is not 16 bytes. Public for the fuzz target
/// `passkey_json`.
pub fn user_handle_of(credential: &PublicKeyCredential) -> Option<String> {
    credential
        .get_user_unique_id()
        .and_then(|h| Uuid::from_slice(h).ok())
        .map(|u| u.to_string())
}

/// A verification failure: logged at debug (it is the client's), answered
/// as [`PasskeyError::Refused`].
fn refused(error: WebauthnError) -> PasskeyError {
    tracing::debug!(error = %error, "passkey not accepted");
    PasskeyError::Refused
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passkeys_are_off_for_an_ip_address_and_on_for_a_host_name() {
        let off = |url: &str| off_reason(&Url::parse(url).unwrap());
        assert!(off("http://127.0.0.1:8000").is_some());
        assert!(off("http://[::1]:8000").is_some());
        assert_eq!(off("http://localhost:8000"), None);
        assert_eq!(off("https://login.example.org"), None);
    }

    #[test]
    fn registration_asks_for_a_resident_credential_and_user_verification() {
        let db_free = WebauthnBuilder::new("localhost", &Url::parse("http://localhost:8000").unwrap())
            .unwrap()
            .build()
            .unwrap();
        let (options, _) = db_free
            .start_passkey_registration(Uuid::new_v4(), "ada@example.org", "Ada", None)
            .unwrap();
        let options = serde_json::to_value(resident(options)).unwrap();
        let selection = &options["publicKey"]["authenticatorSelection"];
        assert_eq!(selection["residentKey"], "required", "{options}");
        assert_eq!(selection["requireResidentKey"], true);
        assert_eq!(selection["userVerification"], "required");
        let challenge = options["publicKey"]["challenge"].as_str().unwrap();
        assert!(challenge.len() >= 43, "at least 256 bits, base64url: {challenge}");
    }

    #[test]
    fn a_credential_is_found_by_the_sha256_of_its_id() {
        assert_eq!(
            credential_hash(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
