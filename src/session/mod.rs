//! Server-side sessions.
//!
//! The browser holds a random 256-bit id in an HttpOnly cookie; the database
//! holds its SHA-256 with the user id and a JSON payload. A [`Session`] is
//! loaded at most once per request (on first use by a guard), changed in
//! memory, and written back by the Gatehouse fairing when the response leaves,
//! so catchers and handlers alike can change it. Signing in regenerates the id
//! (the pre-login id stops working); expiry is idle (`session.idle_minutes`)
//! and absolute (`session.absolute_hours`).

pub mod bound;
mod cookies;
pub mod device;
mod guards;
mod load;
pub(crate) mod password_change;
pub(crate) mod reauth;
mod remember;
mod remember_store;
pub mod store;

pub use cookies::session_cookie_name;
pub use guards::{AuthUser, Guest};
pub(crate) use guards::{password_change_due, PasswordChangeDue, PasswordChangeRefused};
pub use remember::{
    own_binding as remembered_binding,
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

use bound::{headers, Binding, Bound};

use crate::clock::unix_now;
use crate::db::DbError;
use crate::domain::challenge::Purpose;
use crate::domain::{sha256_hex, SecretToken};
use crate::shared::Shared;

/// Session key holding the URL to return to after signing in.
pub const INTENDED_KEY: &str = "url.intended";
const FLASH_KEY: &str = "flash";
/// Activity is written back at most this often (seconds) when nothing changed.
pub(super) const TOUCH_INTERVAL: i64 = 60;

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
    /// The binding of a bound session loaded with a live bound cookie.
    bound: Option<Bound>,
    /// The binding a session signed in by this request keeps: a bound
    /// remember-me record's, or the signed-in session's it replaces.
    carried: Option<Binding>,
    /// The binding of the live row the session cookie named, with its
    /// user, whether or not a live bound cookie came with it.
    named: Option<(Binding, Option<i64>)>,
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
        let loaded = load::load(req, state).await?;
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

    /// The device binding of this session, when the request carried a
    /// live bound cookie for it.
    pub(crate) fn bound(&self) -> Option<Bound> {
        self.lock().bound.clone()
    }

    /// The binding this session has: proven by the request's bound cookie,
    /// or carried into the session this request signed in.
    pub(crate) fn binding(&self) -> Option<Binding> {
        let s = self.lock();
        let proven = s.bound.as_ref().map(|b| b.binding.clone());
        proven.or_else(|| s.carried.clone())
    }

    /// The binding of the live session row this request's session cookie
    /// named, and the row's user — whether or not the request carried a
    /// live bound cookie for it (what a refresh is for).
    pub(crate) fn named_binding(&self) -> Option<(Binding, Option<i64>)> {
        self.lock().named.clone()
    }

    /// Notes that this request bound the session (or proved its binding)
    /// with a bound cookie minted at `minted_at`.
    pub(crate) fn set_bound(&self, binding: Binding, minted_at: i64) {
        self.lock().bound = Some(Bound {
            binding,
            minted_at,
        });
    }

    /// Signs in through a refresh proven by the key of the DBSC session
    /// `id`, whose bound remember-me record `req` presents; `true` when it
    /// signed in (the new session keeps the binding).
    pub(crate) async fn recall_bound(
        &self,
        req: &Request<'_>,
        gh: &Shared,
        id: &str,
    ) -> Result<bool, DbError> {
        load::recall_bound(self, req, gh, id).await
    }

    /// Signs `user_id` in: a fresh id replaces the current one (its stored
    /// key is [`Session::stored_id`] from now on), the data stays, and so
    /// does the device binding of the same user's bound session.
    pub(crate) fn sign_in(&self, user_id: i64) {
        let mut s = self.lock();
        let same_user = s.user_id == Some(user_id);
        s.carried = s.bound.take().filter(|_| same_user).map(|b| b.binding);
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
        s.bound = None;
        s.carried = None;
        s.user_id = None;
        s.payload.data.clear();
    }

    /// Writes changes back and sets or clears the cookie on `response`.
    pub(crate) async fn persist(
        &self,
        gh: &Shared,
        response: &mut Response<'_>,
    ) -> Result<(), DbError> {
        let (op, cookie, offer) = {
            let mut s = self.lock();
            let obsolete = s.obsolete.take();
            let offer = Offer::of(&s, gh);
            let (op, cookie) = if s.destroyed {
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
                        binding: s.carried.clone().map(Box::new),
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
            };
            (op, cookie, offer)
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
                binding,
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
                    binding: binding.as_deref(),
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
        if !ended {
            offer.announce(gh, response);
        }
        Ok(())
    }
}

/// What an answer tells a browser of device binding.
enum Offer {
    /// Nothing.
    Nothing,
    /// A sign-in: the registration header, with a challenge issued to the
    /// new session (its stored key).
    Register(String),
    /// A bound session's answer: the next refresh's challenge, pre-loaded.
    Challenge(String),
    /// An ended session: its bound cookie goes too.
    Expire,
}

impl Offer {
    fn of(s: &State, gh: &Shared) -> Self {
        if s.destroyed {
            return Self::Expire;
        }
        if let Some(bound) = &s.bound {
            return Self::Challenge(bound.binding.id.clone());
        }
        match (&s.id, s.minted, s.user_id, &s.carried) {
            (Some(id), true, Some(_), None) if gh.settings.session.device_binding => {
                Self::Register(sha256_hex(id))
            }
            _ => Self::Nothing,
        }
    }

    fn announce(self, gh: &Shared, response: &mut Response<'_>) {
        let now = unix_now();
        match self {
            Self::Nothing => {}
            Self::Register(owner) => {
                let challenge = gh.dbsc.issue(Purpose::Register, &owner, now);
                if let Some(value) = headers::registration(bound::REGISTER_PATH, &challenge) {
                    response.set_raw_header(headers::REGISTRATION, value.clone());
                    response.set_raw_header(headers::REGISTRATION_OLD, value);
                }
            }
            Self::Challenge(id) => {
                if response.headers().contains(headers::CHALLENGE) {
                    return;
                }
                let challenge = gh.dbsc.issue(Purpose::Refresh, &id, now);
                if let Some(value) = headers::challenge(&challenge, &id) {
                    response.set_raw_header(headers::CHALLENGE, value);
                }
            }
            Self::Expire => response.adjoin_header(bound::cookie::removal(&gh.settings)),
        }
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
        binding: Option<Box<Binding>>,
        obsolete: Option<String>,
    },
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
