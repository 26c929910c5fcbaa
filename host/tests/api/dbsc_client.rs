//! A DBSC client that speaks the protocol as Chrome does, with keys of its
//! own (EC P-256 or RSA 2048): it reads the registration header of a
//! sign-in answer, registers with a proof signed by its key, and refreshes
//! through the 403 challenge round. Structured headers are read with
//! `sfv` and proofs signed with `jsonwebtoken`, neither of them Gatehouse's
//! code.

use std::sync::OnceLock;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header as JwtHeader};
use rocket::http::{Cookie, Header, Status};
use rocket::local::asynchronous::{Client, LocalRequest, LocalResponse};
use serde_json::{json, Value};
use sfv::{BareItem, Item, List, ListEntry, Parser};

/// A device key: the private half signs, the public half goes in the
/// registration proof's header.
pub struct DeviceKey {
    alg: Algorithm,
    signing: EncodingKey,
    jwk: Jwk,
}

impl DeviceKey {
    /// A new EC P-256 key (ES256), as Chrome makes by default.
    pub fn es256() -> Self {
        use p256::pkcs8::EncodePrivateKey;
        let secret = p256::SecretKey::random(&mut rand::rngs::OsRng);
        let der = secret.to_pkcs8_der().expect("PKCS#8");
        Self::of(Algorithm::ES256, EncodingKey::from_ec_der(der.as_bytes()))
    }

    /// An RSA 2048 key (RS256). Made once per test binary: generating one
    /// is slow, and what is tested is the algorithm, not the key.
    pub fn rs256() -> Self {
        static DER: OnceLock<Vec<u8>> = OnceLock::new();
        let der = DER.get_or_init(|| {
            use rsa::pkcs1::EncodeRsaPrivateKey;
            let key = rsa::RsaPrivateKey::new(&mut rand::rngs::OsRng, 2048).expect("RSA key");
            key.to_pkcs1_der().expect("PKCS#1").as_bytes().to_vec()
        });
        Self::of(Algorithm::RS256, EncodingKey::from_rsa_der(der))
    }

    fn of(alg: Algorithm, signing: EncodingKey) -> Self {
        let jwk = Jwk::from_encoding_key(&signing, alg).expect("public JWK");
        Self { alg, signing, jwk }
    }

    /// A proof over `challenge`: with the public key in its header (a
    /// registration) or without (a refresh).
    pub fn proof(&self, challenge: &str, with_key: bool) -> String {
        let mut header = JwtHeader::new(self.alg);
        header.typ = Some("dbsc+jwt".to_owned());
        if with_key {
            let mut jwk = self.jwk.clone();
            jwk.common = Default::default();
            header.jwk = Some(jwk);
        }
        jsonwebtoken::encode(&header, &json!({"jti": challenge}), &self.signing).expect("signed")
    }
}

/// A JWT with any header and payload, signed with nothing or a shared
/// secret: what a forger sends.
pub fn forged(header: Value, challenge: &str, signature: &[u8]) -> String {
    let part = |v: &Value| URL_SAFE_NO_PAD.encode(v.to_string());
    format!(
        "{}.{}.{}",
        part(&header),
        part(&json!({"jti": challenge})),
        URL_SAFE_NO_PAD.encode(signature)
    )
}

/// The string `value` as a structured-field string item (`"…"`).
pub fn sf_string(value: &str) -> String {
    format!("\"{value}\"")
}

/// The registration a sign-in answer offers: its path and challenge, from
/// `Secure-Session-Registration`, as a browser parses it.
pub fn offered(response: &LocalResponse<'_>) -> Option<(String, String)> {
    let value = response.headers().get_one("Secure-Session-Registration")?;
    let list: List = Parser::new(value).parse().ok()?;
    let ListEntry::InnerList(inner) = list.first()? else {
        return None;
    };
    let algorithms: Vec<String> = inner
        .items
        .iter()
        .filter_map(|item| item.bare_item.as_token().map(|t| t.as_str().to_owned()))
        .collect();
    assert_eq!(algorithms, ["ES256", "RS256"], "the algorithms offered");
    let param = |name: &str| -> Option<String> {
        inner.params.iter().find_map(|(key, value)| {
            (key.as_str() == name).then(|| value.as_string().map(|s| s.as_str().to_owned()))?
        })
    };
    Some((param("path")?, param("challenge")?))
}

/// The challenge of a `Secure-Session-Challenge` header and the session it
/// names.
pub fn challenge_of(response: &LocalResponse<'_>) -> Option<(String, String)> {
    let value = response.headers().get_one("Secure-Session-Challenge")?;
    let list: List = Parser::new(value).parse().ok()?;
    let ListEntry::Item(Item { bare_item, params }) = list.first()? else {
        return None;
    };
    let BareItem::String(challenge) = bare_item else {
        return None;
    };
    let id = params.iter().find_map(|(key, value)| {
        (key.as_str() == "id").then(|| value.as_string().map(|s| s.as_str().to_owned()))?
    })?;
    Some((challenge.as_str().to_owned(), id))
}

/// A browser's DBSC side: its key and, once registered, its session.
pub struct Device {
    /// The key.
    pub key: DeviceKey,
    /// The DBSC session identifier, once registered.
    pub session: Option<String>,
    /// Cookies sent with every request besides the client's own (for an
    /// untracked client: a browser whose cookies the test holds).
    pub cookies: Vec<(String, String)>,
}

impl Device {
    /// A device with `key` and no session yet.
    pub fn new(key: DeviceKey) -> Self {
        Self {
            key,
            session: None,
            cookies: Vec::new(),
        }
    }

    /// This device, as registered with the DBSC session `id`.
    pub fn with_session(mut self, id: &str) -> Self {
        self.session = Some(id.to_owned());
        self
    }

    /// Registers at `path` with a proof over `challenge` sent from
    /// `client`; answers the status and the body.
    pub async fn register(
        &mut self,
        client: &Client,
        path: &str,
        challenge: &str,
    ) -> (Status, Value) {
        let proof = self.key.proof(challenge, true);
        let response = client
            .post(path.to_owned())
            .header(Header::new("Secure-Session-Response", sf_string(&proof)))
            .dispatch()
            .await;
        let status = response.status();
        let body: Value = serde_json::from_str(&response.into_string().await.unwrap_or_default())
            .unwrap_or(Value::Null);
        if status == Status::Ok {
            self.session = body["session_identifier"].as_str().map(str::to_owned);
        }
        (status, body)
    }

    /// Refreshes as Chrome does: asks for a challenge (403), then sends a
    /// proof over it. Answers the second answer's status and body.
    pub async fn refresh(&self, client: &Client) -> (Status, Value) {
        let (status, body, _) = self.refresh_cookies(client).await;
        (status, body)
    }

    /// [`Self::refresh`], answering the cookies the answer set too.
    pub async fn refresh_cookies(&self, client: &Client) -> (Status, Value, Vec<(String, String)>) {
        let (challenge, _) = self
            .challenge(client)
            .await
            .expect("a 403 with a challenge");
        self.prove_cookies(client, &self.key.proof(&challenge, false))
            .await
    }

    fn request<'c>(&self, client: &'c Client, proof: Option<&str>) -> LocalRequest<'c> {
        let id = self.session.as_deref().expect("registered");
        let mut request = client
            .post("/auth/dbsc/refresh")
            .header(Header::new("Sec-Secure-Session-Id", sf_string(id)));
        if let Some(proof) = proof {
            request = request.header(Header::new("Secure-Session-Response", sf_string(proof)));
        }
        for (name, value) in &self.cookies {
            request = request.cookie(Cookie::new(name.clone(), value.clone()));
        }
        request
    }

    /// The challenge a refresh without a proof is answered with.
    pub async fn challenge(&self, client: &Client) -> Option<(String, String)> {
        let response = self.request(client, None).dispatch().await;
        if response.status() != Status::Forbidden {
            return None;
        }
        challenge_of(&response)
    }

    /// Sends `proof` to the refresh route; answers the status and body.
    pub async fn prove(&self, client: &Client, proof: &str) -> (Status, Value) {
        let (status, body, _) = self.prove_cookies(client, proof).await;
        (status, body)
    }

    /// [`Self::prove`], answering the cookies the answer set too.
    pub async fn prove_cookies(
        &self,
        client: &Client,
        proof: &str,
    ) -> (Status, Value, Vec<(String, String)>) {
        let response = self.request(client, Some(proof)).dispatch().await;
        let status = response.status();
        let set: Vec<(String, String)> = response
            .headers()
            .get("Set-Cookie")
            .filter_map(|raw| Cookie::parse_encoded(raw.to_owned()).ok())
            .map(|c| (c.name().to_owned(), c.value().to_owned()))
            .collect();
        let body = serde_json::from_str(&response.into_string().await.unwrap_or_default())
            .unwrap_or(Value::Null);
        (status, body, set)
    }
}
