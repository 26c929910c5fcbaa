//! Server-side sessions.
//!
//! The browser holds a random 256-bit id in an HttpOnly cookie; the database
//! holds its SHA-256 with the user id and a JSON payload. A [`Session`] is
//! loaded at most once per request (on first use by a guard), changed in
//! memory, and written back by the Gatehouse fairing when the response leaves,
//! so catchers and handlers alike can change it. Signing in regenerates the id
//! (the pre-login id stops working); expiry is idle (`session.idle_minutes`)
//! and absolute (`session.absolute_hours`).

mod cookies;
pub mod device;
mod guards;
pub(crate) mod password_change;
pub(crate) mod reauth;
mod remember;
mod remember_store;
pub mod store;

pub use cookies::session_cookie_name;
pub use guards::{AuthUser, Guest};
pub(crate) use guards::{password_change_due, PasswordChangeDue, PasswordChangeRefused};
pub use remember::{
    credential_change, end_every_session, forget as forget_remembered, reissue as reissue_remembered,
    remember, sweep as sweep_remembered, void_session as void_remembered_session,
};
pub use store::{Ending, SignedInBy};
crate::internal! { use remember::Presented; }

use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use rocket::request::{FromRequest, Outcome, Request};
use rocket::{Ignite, Response, Rocket, Sentinel};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::clock::unix_now;
use crate::db::DbError;
use crate::domain::{sha256_hex, SecretToken};
use crate::security::ClientIp;
use crate::shared::Shared;

/// Session key holding the URL to return to after signing in.
pub const INTENDED_KEY: &str = "url.intended";
const FLASH_KEY: &str = "flash";
/// Activity is written back at most this often (seconds) when nothing changed.
const TOUCH_INTERVAL: i64 = 60;

/// How stale `last_activity` may get before a request writes it back: at most
/// [`TOUCH_INTERVAL`], and a sixtieth of the idle lifetime, so a session in use
/// never expires early by more than that (a 1-minute idle lifetime would
/// otherwise end a session used every 45 s).
fn touch_after(idle_seconds: i64) -> i64 {
    (idle_seconds / 60).clamp(1, TOUCH_INTERVAL)
}

/// The JSON kept in `sessions.payload`.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Payload {
    created_at: i64,
    #[serde(default)]
    data: Map<String, Value>,
}

#[derive(Debug, Default)]
struct State {
    /// Cookie value of the session: as the client knows it, or minted by
    /// this request (`minted`).
    id: Option<String>,
    /// `id` was made by this request: nothing is stored under it yet.
    minted: bool,
    user_id: Option<i64>,
    payload: Payload,
    dirty: bool,
    touch: bool,
    /// Cookie value of a row that regeneration or expiry made obsolete.
    obsolete: Option<String>,
    destroyed: bool,
    ip: String,
    user_agent: Option<String>,
    /// What signed it in, written with the row when it is inserted.
    signed_in_by: SignedInBy,
    /// What a recall found that the owner must hear of.
    notices: Vec<RecallNotice>,
}

/// What a recall by a remember-me cookie found that the account's owner
/// must hear of; the Gatehouse fairing reports it (an event, a mail) as the
/// answer leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecallNotice {
    /// The cookie signed in on a browser without the device cookie the
    /// account knows.
    NewDevice {
        /// The owner.
        user_id: i64,
    },
    /// A copy of the cookie was presented: every remember-me cookie of the
    /// owner is void and the sessions it signed in ended.
    Theft {
        /// The owner.
        user_id: i64,
    },
}

/// The prefix of every key a host keeps through [`Session::host`]; no key
/// of Gatehouse's starts with it.
const HOST_PREFIX: &str = "host:";

/// A host's own data in a [`Session`] (see [`Session::host`]).
#[derive(Debug, Clone, Copy)]
pub struct HostData<'a>(&'a Session);

impl HostData<'_> {
    /// The host's value under `key`.
    pub fn get(&self, key: &str) -> Option<Value> {
        self.0.get(&format!("{HOST_PREFIX}{key}"))
    }

    /// Keeps `value` under `key` until the session ends.
    pub fn insert(&self, key: &str, value: Value) {
        self.0.insert(&format!("{HOST_PREFIX}{key}"), value);
    }

    /// Removes and answers the host's value under `key`.
    pub fn remove(&self, key: &str) -> Option<Value> {
        self.0.remove(&format!("{HOST_PREFIX}{key}"))
    }
}

/// The current request's session; clones share it.
#[derive(Clone, Debug, Default)]
pub struct Session(Arc<Mutex<State>>);

#[derive(Default)]
struct Slot(OnceLock<Session>);

impl Session {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The session of `req` if a guard already loaded it.
    pub(crate) fn cached(req: &Request<'_>) -> Option<Session> {
        req.local_cache(Slot::default).0.get().cloned()
    }

    /// Loads (once) the session of `req`.
    pub(crate) async fn of(req: &Request<'_>) -> Result<Session, DbError> {
        if let Some(found) = Self::cached(req) {
            return Ok(found);
        }
        let Some(state) = Shared::of(req) else {
            return Ok(Session::default());
        };
        let loaded = load(req, state).await?;
        let slot = req.local_cache(Slot::default);
        Ok(slot.0.get_or_init(|| loaded).clone())
    }

    /// The signed-in user's id, if any.
    pub fn user_id(&self) -> Option<i64> {
        self.lock().user_id
    }

    /// The key this session is stored under (SHA-256 hex of its cookie
    /// value), once it has one.
    pub(crate) fn stored_id(&self) -> Option<String> {
        self.lock().id.as_deref().map(sha256_hex)
    }

    /// The host's own session data: a namespace of its own, which cannot
    /// read or write what Gatehouse keeps in the session (the sign-in
    /// waiting for its second step, sudo mode's window, a provider's flow).
    ///
    /// ```
    /// use gatehouse::Session;
    /// use serde_json::json;
    ///
    /// let session = Session::default();
    /// session.host().insert("cart", json!([3, 4]));
    /// assert_eq!(session.host().get("cart"), Some(json!([3, 4])));
    /// assert_eq!(session.host().remove("cart"), Some(json!([3, 4])));
    /// assert_eq!(session.host().get("reauth"), None, "never Gatehouse's keys");
    /// ```
    pub fn host(&self) -> HostData<'_> {
        HostData(self)
    }

    /// A value from the session data.
    pub(crate) fn get(&self, key: &str) -> Option<Value> {
        self.lock().payload.data.get(key).cloned()
    }

    /// Stores a value in the session data.
    pub(crate) fn insert(&self, key: &str, value: Value) {
        let mut s = self.lock();
        s.payload.data.insert(key.to_owned(), value);
        s.dirty = true;
    }

    /// Removes and returns a value from the session data.
    pub(crate) fn remove(&self, key: &str) -> Option<Value> {
        let mut s = self.lock();
        let value = s.payload.data.remove(key);
        s.dirty |= value.is_some();
        value
    }

    /// Keeps a message for the next screen.
    pub fn set_flash(&self, value: Value) {
        self.insert(FLASH_KEY, value);
    }

    /// Takes the message left for this screen.
    pub fn take_flash(&self) -> Option<Value> {
        self.remove(FLASH_KEY)
    }

    /// Signs `user_id` in: a fresh id replaces the current one (its stored
    /// key is [`Session::stored_id`] from now on), the data stays.
    pub(crate) fn sign_in(&self, user_id: i64) {
        let mut s = self.lock();
        let fresh = SecretToken::generate().expose().to_owned();
        let old = s.id.replace(fresh);
        if !s.minted {
            s.obsolete = old;
        }
        s.minted = true;
        s.user_id = Some(user_id);
        s.payload.created_at = unix_now();
        s.dirty = true;
        s.destroyed = false;
        s.signed_in_by = SignedInBy::default();
    }

    /// Notes what signed this session in (after [`Session::sign_in`]):
    /// voiding it ends the session.
    pub(crate) fn signed_in_by(&self, by: SignedInBy) {
        self.lock().signed_in_by = by;
    }

    /// What a recall found that the owner must hear of, once.
    pub(crate) fn take_notices(&self) -> Vec<RecallNotice> {
        std::mem::take(&mut self.lock().notices)
    }

    /// Ends the session: the row is deleted and the cookie expired.
    pub(crate) fn destroy(&self) {
        let mut s = self.lock();
        s.destroyed = true;
        s.user_id = None;
        s.payload.data.clear();
    }

    /// Writes changes back and sets or clears the cookie on `response`.
    pub(crate) async fn persist(
        &self,
        gh: &Shared,
        response: &mut Response<'_>,
    ) -> Result<(), DbError> {
        let (op, cookie) = {
            let mut s = self.lock();
            let obsolete = s.obsolete.take();
            if s.destroyed {
                let id = s.id.take();
                s.destroyed = false;
                let cookie = Some(cookies::removal(gh));
                (Op::Delete(id.into_iter().chain(obsolete).collect()), cookie)
            } else if s.dirty {
                s.dirty = false;
                let minted = s.minted || s.id.is_none();
                s.minted = false;
                let id =
                    s.id.get_or_insert_with(|| SecretToken::generate().expose().to_owned())
                        .clone();
                let cookie = minted.then(|| cookies::issue(gh, &id));
                let payload = serde_json::to_string(&s.payload).unwrap_or_else(|_| "{}".into());
                (
                    Op::Save {
                        id,
                        minted,
                        user_id: s.user_id,
                        payload,
                        ip: s.ip.clone(),
                        user_agent: s.user_agent.clone(),
                        signed_in_by: s.signed_in_by.clone(),
                        obsolete,
                    },
                    cookie,
                )
            } else if s.touch {
                s.touch = false;
                (s.id.clone().map(Op::Touch).unwrap_or(Op::Nothing), None)
            } else {
                (
                    obsolete.map(|o| Op::Delete(vec![o])).unwrap_or(Op::Nothing),
                    None,
                )
            }
        };
        let db = &gh.db;
        let ended = match op {
            Op::Nothing => false,
            Op::Touch(id) => {
                store::touch(db, &sha256_hex(&id), unix_now()).await?;
                false
            }
            Op::Delete(ids) => {
                for id in ids {
                    store::delete(db, &sha256_hex(&id)).await?;
                }
                false
            }
            Op::Save {
                id,
                minted,
                user_id,
                payload,
                ip,
                user_agent,
                signed_in_by,
                obsolete,
            } => {
                let row = store::SessionRow {
                    id_hash: &sha256_hex(&id),
                    user_id,
                    ip_address: &ip,
                    user_agent: user_agent.as_deref(),
                    payload: &payload,
                    last_activity: unix_now(),
                    signed_in_by,
                };
                // Only an id minted here is inserted; a loaded one is updated,
                // so a session ended meanwhile is not brought back.
                let kept = if minted {
                    store::insert(db, row).await?;
                    true
                } else {
                    store::update(db, row).await?
                };
                if let Some(old) = obsolete {
                    store::delete(db, &sha256_hex(&old)).await?;
                }
                !kept
            }
        };
        match (cookie, ended) {
            (_, true) => response.adjoin_header(cookies::removal(gh)),
            (Some(cookie), false) => response.adjoin_header(cookie),
            (None, false) => {}
        }
        Ok(())
    }
}

enum Op {
    Nothing,
    Touch(String),
    Delete(Vec<String>),
    Save {
        id: String,
        /// The id was made by this request (nothing stored under it yet).
        minted: bool,
        user_id: Option<i64>,
        payload: String,
        ip: String,
        user_agent: Option<String>,
        signed_in_by: SignedInBy,
        obsolete: Option<String>,
    },
}

async fn load(req: &Request<'_>, gh: &Shared) -> Result<Session, DbError> {
    let now = unix_now();
    let session = &gh.settings.session;
    let mut state = State {
        ip: ClientIp::of(req, &gh.settings).to_string(),
        user_agent: req
            .headers()
            .get_one("User-Agent")
            .map(|ua| ua.chars().take(512).collect()),
        payload: Payload {
            created_at: now,
            data: Map::new(),
        },
        ..State::default()
    };
    if let Some(id) = req
        .cookies()
        .get(&session_cookie_name(&gh.settings))
        .map(|c| c.value().to_owned())
    {
        if let Some(found) = store::find(&gh.db, &sha256_hex(&id)).await? {
            let payload: Payload = serde_json::from_str(&found.payload).unwrap_or_default();
            let idle_seconds = i64::from(session.idle_minutes) * 60;
            let idle_ok = now - found.last_activity < idle_seconds;
            let absolute_ok = now - payload.created_at < i64::from(session.absolute_hours) * 3600;
            if idle_ok && absolute_ok {
                state.touch = now - found.last_activity >= touch_after(idle_seconds);
                state.id = Some(id);
                state.user_id = found.user_id;
                state.payload = payload;
            } else {
                // Expired: the row goes, the client gets a new id if anything is stored.
                store::delete(&gh.db, &sha256_hex(&id)).await?;
            }
        }
    }
    let handle = Session(Arc::new(Mutex::new(state)));
    if handle.user_id().is_some() {
        return Ok(handle);
    }
    match remember::recall(req, gh).await? {
        remember::Recall::Nothing => {}
        remember::Recall::SignIn {
            user_id,
            selector,
            rotated,
        } => {
            handle.sign_in(user_id);
            handle.signed_in_by(SignedInBy {
                remember: Some(selector),
                passkey: None,
            });
            // The rotating recall is the browser's sign-in; its parallel
            // requests within the grace are the same browser.
            if rotated {
                match device::signed_in_on(req.cookies(), gh, user_id).await {
                    Ok(device::Device::New) => {
                        handle.lock().notices.push(RecallNotice::NewDevice { user_id });
                    }
                    Ok(device::Device::Known) => {}
                    Err(e) => tracing::warn!(error = %e, "recall's device not recorded"),
                }
            }
        }
        remember::Recall::Theft { user_id } => {
            handle.lock().notices.push(RecallNotice::Theft { user_id });
        }
    }
    Ok(handle)
}

/// Whether launch must stop because Gatehouse is not attached: a guard of
/// `guard`'s type would otherwise treat every caller as a guest. Says which
/// fairing is missing.
pub(crate) fn gatehouse_missing(rocket: &Rocket<Ignite>, guard: &str) -> bool {
    if rocket.state::<Shared>().is_some() {
        return false;
    }
    tracing::error!(
        "a route takes `{guard}`, but the Gatehouse fairing is not attached: \
         attach it with `.attach(gatehouse::Gatehouse::new())`"
    );
    true
}

/// Launch fails without the Gatehouse fairing (see [`AuthUser`]'s).
impl Sentinel for Session {
    fn abort(rocket: &Rocket<Ignite>) -> bool {
        gatehouse_missing(rocket, "Session")
    }
}

#[rocket::async_trait]
impl<'r> FromRequest<'r> for Session {
    type Error = crate::error::AuthError;

    async fn from_request(req: &'r Request<'_>) -> Outcome<Self, Self::Error> {
        match Session::of(req).await {
            Ok(session) => Outcome::Success(session),
            Err(e) => {
                tracing::error!(error = %e, "session could not be loaded");
                let status = if crate::db::is_unavailable(&e) {
                    rocket::http::Status::ServiceUnavailable
                } else {
                    rocket::http::Status::InternalServerError
                };
                Outcome::Error((status, e.into()))
            }
        }
    }
}

/// Whether the caller prefers an HTML page (a browser) to JSON.
pub(crate) fn wants_html(req: &Request<'_>) -> bool {
    req.accept()
        .map(|accept| accept.preferred().media_type().is_html())
        .unwrap_or(false)
}
