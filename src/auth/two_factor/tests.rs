//! Two-factor sign-in against a real database: SQLite, or the server named
//! by `GATEHOUSE_TEST_DATABASE_URL` (PostgreSQL, MySQL/MariaDB).

use super::secret::PERIOD;
use super::test_db::TestDb;
use super::verification::code_at;
use super::*;

/// The key the integration tests configure, as bytes.
const KEY: [u8; 32] = [0x2a; 32];

/// A moment well inside a time step.
const NOW: u64 = 1_900_000_005;

/// The secret behind an enrolment, as the user's app has it.
fn app_secret(enrolment: &Enrolment) -> TotpSecret {
    let url = enrolment.otpauth_url();
    let base32 = url
        .split_once("secret=")
        .and_then(|(_, rest)| rest.split('&').next())
        .expect("a secret parameter");
    assert_eq!(base32, enrolment.secret_base32());
    let bytes = totp_rs::Secret::Encoded(base32.to_owned())
        .to_bytes()
        .expect("base32");
    TotpSecret::from_bytes(bytes).expect("160 bits")
}

/// A code of six digits that `secret` does not give for `now` or the steps
/// beside it.
fn wrong_code(secret: &TotpSecret, now: u64) -> String {
    let right = [now - PERIOD, now, now + PERIOD].map(|t| code_at(secret, t));
    (0..)
        .map(|n| format!("{n:06}"))
        .find(|code| !right.contains(code))
        .expect("a wrong code")
}

/// Enrols and confirms `user` at [`NOW`]; answers the app's secret and the
/// recovery codes.
async fn enabled(tf: &TwoFactor, user: i64) -> (TotpSecret, RecoveryCodes) {
    let enrolment = tf.enrol(user, "ada@example.org").await.expect("enrols");
    let secret = app_secret(&enrolment);
    let codes = tf
        .confirm_at(user, &code_at(&secret, NOW), NOW)
        .await
        .expect("confirms");
    (secret, codes)
}

#[tokio::test]
async fn a_pending_enrolment_is_not_enabled_until_a_code_confirms_it() {
    let test = TestDb::new().await;
    let user = test.user("ada@example.org").await;
    let tf = TwoFactor::new(test.db.clone(), &KEY);
    assert!(!tf.is_enabled(user).await.unwrap());

    let enrolment = tf.enrol(user, "ada@example.org").await.unwrap();
    assert!(enrolment
        .otpauth_url()
        .starts_with("otpauth://totp/Gatehouse:ada%40example.org?secret="));
    assert!(enrolment.qr_svg().starts_with("<svg"));
    assert!(!tf.is_enabled(user).await.unwrap(), "pending is not enabled");
    let secret = app_secret(&enrolment);
    assert!(
        matches!(
            tf.verify_sign_in_at(user, Epoch(0), &code_at(&secret, NOW), NOW).await,
            Err(TwoFactorError::NotEnrolled)
        ),
        "a pending enrolment does not take part in sign-in"
    );
    assert!(matches!(
        tf.confirm_at(user, &wrong_code(&secret, NOW), NOW).await,
        Err(TwoFactorError::WrongCode)
    ));
    assert!(!tf.is_enabled(user).await.unwrap());

    let codes = tf
        .confirm_at(user, &code_at(&secret, NOW), NOW)
        .await
        .unwrap();
    assert_eq!(codes.expose().len(), 10);
    assert!(tf.is_enabled(user).await.unwrap());
    assert_eq!(tf.remaining_recovery_codes(user).await.unwrap(), 10);
    assert!(matches!(
        tf.confirm_at(user, &code_at(&secret, NOW + PERIOD), NOW + PERIOD)
            .await,
        Err(TwoFactorError::AlreadyEnabled)
    ));
    test.finish().await;
}

#[tokio::test]
async fn a_code_is_accepted_once_and_never_after_a_later_one() {
    let test = TestDb::new().await;
    let user = test.user("ada@example.org").await;
    let tf = TwoFactor::new(test.db.clone(), &KEY);
    let (secret, _) = enabled(&tf, user).await;

    let confirming = code_at(&secret, NOW);
    assert!(
        matches!(
            tf.verify_sign_in_at(user, Epoch(0), &confirming, NOW).await,
            Err(TwoFactorError::WrongCode)
        ),
        "the code that confirmed the enrolment is used"
    );
    let next = code_at(&secret, NOW + PERIOD);
    tf.verify_sign_in_at(user, Epoch(0), &next, NOW + PERIOD)
        .await
        .expect("the next step's code signs in");
    assert!(
        matches!(
            tf.verify_sign_in_at(user, Epoch(0), &next, NOW + PERIOD).await,
            Err(TwoFactorError::WrongCode)
        ),
        "replayed"
    );
    let later = NOW + 3 * PERIOD;
    let ahead = code_at(&secret, later + PERIOD);
    tf.verify_sign_in_at(user, Epoch(0), &ahead, later)
        .await
        .expect("an app one step ahead");
    assert!(
        matches!(
            tf.verify_sign_in_at(user, Epoch(0), &code_at(&secret, later), later).await,
            Err(TwoFactorError::WrongCode)
        ),
        "a code older than the last accepted one"
    );
    assert!(matches!(
        tf.verify_sign_in_at(user, Epoch(0), "12345a", later + 2 * PERIOD).await,
        Err(TwoFactorError::WrongCode)
    ));
    test.finish().await;
}

#[tokio::test]
async fn another_instance_refuses_a_code_this_one_accepted() {
    let test = TestDb::new().await;
    let user = test.user("ada@example.org").await;
    let one = TwoFactor::new(test.db.clone(), &KEY);
    let other_pool = Db::connect(&test.url).await.unwrap();
    let two = TwoFactor::new(other_pool.clone(), &KEY);
    let (secret, _) = enabled(&one, user).await;

    let code = code_at(&secret, NOW + PERIOD);
    one.verify_sign_in_at(user, Epoch(0), &code, NOW + PERIOD).await.unwrap();
    assert!(matches!(
        two.verify_sign_in_at(user, Epoch(0), &code, NOW + PERIOD).await,
        Err(TwoFactorError::WrongCode)
    ));
    other_pool.pool().close().await;
    test.finish().await;
}

#[tokio::test]
async fn of_concurrent_sign_ins_with_one_code_exactly_one_gets_through() {
    let test = TestDb::new().await;
    let user = test.user("ada@example.org").await;
    let tf = TwoFactor::new(test.db.clone(), &KEY);
    let (secret, _) = enabled(&tf, user).await;

    let code = code_at(&secret, NOW + PERIOD);
    let attempts = (0..8).map(|_| {
        let tf = tf.clone();
        let code = code.clone();
        tokio::spawn(async move { tf.verify_sign_in_at(user, Epoch(0), &code, NOW + PERIOD).await })
    });
    let outcomes = futures::future::join_all(attempts).await;
    let mut accepted = 0;
    for outcome in outcomes {
        match outcome.expect("no panic") {
            Ok(()) => accepted += 1,
            Err(TwoFactorError::WrongCode) => {}
            Err(e) => panic!("unexpected {e}"),
        }
    }
    assert_eq!(accepted, 1);
    test.finish().await;
}

#[tokio::test]
async fn a_recovery_code_works_once_and_a_new_set_voids_the_old() {
    let test = TestDb::new().await;
    let user = test.user("ada@example.org").await;
    let bob = test.user("bob@example.org").await;
    let tf = TwoFactor::new(test.db.clone(), &KEY);
    let (_, codes) = enabled(&tf, user).await;
    let (_, bobs) = enabled(&tf, bob).await;
    let first = codes.expose()[0].to_owned();

    assert!(
        matches!(
            tf.use_recovery_code(user, Epoch(0), bobs.expose()[0]).await,
            Err(TwoFactorError::WrongCode)
        ),
        "another user's code"
    );
    tf.use_recovery_code(user, Epoch(0), &format!(" {} ", first.to_uppercase()))
        .await
        .expect("typed in capitals with spaces");
    assert_eq!(tf.remaining_recovery_codes(user).await.unwrap(), 9);
    assert!(matches!(
        tf.use_recovery_code(user, Epoch(0), &first).await,
        Err(TwoFactorError::WrongCode)
    ));
    assert!(matches!(
        tf.use_recovery_code(user, Epoch(0), "not a code").await,
        Err(TwoFactorError::WrongCode)
    ));

    let renewed = tf.new_recovery_codes(user).await.unwrap();
    assert_eq!(tf.remaining_recovery_codes(user).await.unwrap(), 10);
    assert_eq!(test.rows("gatehouse_recovery_codes", user).await, 10);
    assert!(matches!(
        tf.use_recovery_code(user, Epoch(0), codes.expose()[1]).await,
        Err(TwoFactorError::WrongCode)
    ));
    tf.use_recovery_code(user, Epoch(0), renewed.expose()[1]).await.unwrap();
    assert_eq!(tf.remaining_recovery_codes(bob).await.unwrap(), 10);
    test.finish().await;
}

#[tokio::test]
async fn concurrent_uses_of_one_recovery_code_let_one_through() {
    let test = TestDb::new().await;
    let user = test.user("ada@example.org").await;
    let tf = TwoFactor::new(test.db.clone(), &KEY);
    let (_, codes) = enabled(&tf, user).await;
    let code = codes.expose()[3].to_owned();
    let attempts = (0..8).map(|_| {
        let tf = tf.clone();
        let code = code.clone();
        tokio::spawn(async move { tf.use_recovery_code(user, Epoch(0), &code).await.is_ok() })
    });
    let accepted = futures::future::join_all(attempts)
        .await
        .into_iter()
        .filter(|ok| *ok.as_ref().expect("no panic"))
        .count();
    assert_eq!(accepted, 1);
    assert_eq!(tf.remaining_recovery_codes(user).await.unwrap(), 9);
    test.finish().await;
}

#[tokio::test]
async fn disabling_removes_the_secret_and_every_code() {
    let test = TestDb::new().await;
    let user = test.user("ada@example.org").await;
    let tf = TwoFactor::new(test.db.clone(), &KEY);
    let (secret, codes) = enabled(&tf, user).await;

    tf.disable(user).await.unwrap();
    assert!(!tf.is_enabled(user).await.unwrap());
    assert_eq!(test.rows("gatehouse_two_factor", user).await, 0);
    assert_eq!(test.rows("gatehouse_recovery_codes", user).await, 0);
    assert!(matches!(
        tf.verify_sign_in_at(user, Epoch(0), &code_at(&secret, NOW + PERIOD), NOW + PERIOD)
            .await,
        Err(TwoFactorError::NotEnrolled)
    ));
    assert!(matches!(
        tf.use_recovery_code(user, Epoch(0), codes.expose()[0]).await,
        Err(TwoFactorError::WrongCode)
    ));
    assert!(matches!(
        tf.new_recovery_codes(user).await,
        Err(TwoFactorError::NotEnrolled)
    ));
    assert!(matches!(
        tf.disable(user).await,
        Err(TwoFactorError::NotEnrolled)
    ));

    let (again, _) = enabled(&tf, user).await;
    assert_ne!(again.bytes(), secret.bytes(), "a new enrolment, a new secret");
    test.finish().await;
}

#[tokio::test]
async fn enrolling_again_replaces_a_pending_secret_but_never_an_active_one() {
    let test = TestDb::new().await;
    let user = test.user("ada@example.org").await;
    let tf = TwoFactor::new(test.db.clone(), &KEY);
    let first = app_secret(&tf.enrol(user, "ada@example.org").await.unwrap());
    let second = app_secret(&tf.enrol(user, "ada@example.org").await.unwrap());
    assert_eq!(test.rows("gatehouse_two_factor", user).await, 1);
    if code_at(&first, NOW) != code_at(&second, NOW) {
        assert!(matches!(
            tf.confirm_at(user, &code_at(&first, NOW), NOW).await,
            Err(TwoFactorError::WrongCode)
        ));
    }
    tf.confirm_at(user, &code_at(&second, NOW), NOW)
        .await
        .unwrap();

    assert!(matches!(
        tf.enrol(user, "ada@example.org").await,
        Err(TwoFactorError::AlreadyEnabled)
    ));
    let sealed = store::state(&test.db, user).await.unwrap();
    assert!(
        !store::begin(&test.db, user, "v1:replacement").await.unwrap(),
        "the store refuses too"
    );
    assert_eq!(store::state(&test.db, user).await.unwrap(), sealed);
    tf.verify_sign_in_at(user, Epoch(0), &code_at(&second, NOW + PERIOD), NOW + PERIOD)
        .await
        .expect("the confirmed secret still signs in");
    test.finish().await;
}

#[tokio::test]
async fn the_secret_is_stored_sealed_and_opens_only_with_the_key() {
    let test = TestDb::new().await;
    let user = test.user("ada@example.org").await;
    let tf = TwoFactor::new(test.db.clone(), &KEY);
    let (secret, codes) = enabled(&tf, user).await;

    let State::Active { sealed, .. } = store::state(&test.db, user).await.unwrap() else {
        panic!("active");
    };
    assert!(sealed.starts_with("v1:"), "{sealed}");
    assert!(!sealed.contains(&secret.base32()));
    let row = test
        .db
        .fetch_optional(
            test.db
                .query("SELECT code_hash FROM gatehouse_recovery_codes WHERE user_id = $1")
                .bind(user),
        )
        .await
        .unwrap()
        .unwrap();
    let stored = crate::db::TextColumn::text(&row, "code_hash").unwrap().unwrap();
    assert_eq!(stored.len(), 64);
    assert!(codes.hashes().contains(&stored));
    assert!(!codes.expose().iter().any(|c| stored.contains(&c.replace('-', ""))));

    let other_key = TwoFactor::new(test.db.clone(), &[0x2b; 32]);
    assert!(matches!(
        other_key
            .verify_sign_in_at(user, Epoch(0), &code_at(&secret, NOW + PERIOD), NOW + PERIOD)
            .await,
        Err(TwoFactorError::Sealing(SealingError::WrongKey))
    ));
    other_key
        .use_recovery_code(user, Epoch(0), codes.expose()[0])
        .await
        .expect("recovery codes do not depend on the key");
    test.finish().await;
}

#[tokio::test]
async fn deleting_a_user_deletes_their_two_factor_rows() {
    let test = TestDb::new().await;
    let user = test.user("ada@example.org").await;
    let tf = TwoFactor::new(test.db.clone(), &KEY);
    enabled(&tf, user).await;
    assert_eq!(test.rows("gatehouse_recovery_codes", user).await, 10);

    test.db
        .execute(test.db.query("DELETE FROM users WHERE id = $1").bind(user))
        .await
        .unwrap();
    assert_eq!(test.rows("gatehouse_two_factor", user).await, 0);
    assert_eq!(test.rows("gatehouse_recovery_codes", user).await, 0);
    test.finish().await;
}

#[tokio::test]
async fn the_database_accepts_each_step_once_and_only_for_an_active_user() {
    let test = TestDb::new().await;
    let user = test.user("ada@example.org").await;
    let db = &test.db;
    assert!(!store::accept_step(db, user, Epoch(0), 10).await.unwrap(), "nothing stored");
    assert!(store::begin(db, user, "v1:pending").await.unwrap());
    assert!(!store::accept_step(db, user, Epoch(0), 10).await.unwrap(), "pending");
    let mut tx = crate::db::Tx::begin(db).await.unwrap();
    assert!(store::confirm_in(&mut tx, user, 10, &[]).await.unwrap());
    assert!(!store::confirm_in(&mut tx, user, 11, &[]).await.unwrap(), "confirmed once");
    tx.commit().await.unwrap();

    assert!(!store::accept_step(db, user, Epoch(0), 10).await.unwrap(), "the confirming step");
    assert!(!store::accept_step(db, user, Epoch(0), 9).await.unwrap(), "an older step");
    assert!(store::accept_step(db, user, Epoch(0), 11).await.unwrap());
    assert!(!store::accept_step(db, user, Epoch(0), 11).await.unwrap(), "replayed");
    assert!(store::accept_step(db, user, Epoch(0), 13).await.unwrap(), "a step skipped");
    assert!(!store::accept_step(db, user, Epoch(0), 12).await.unwrap(), "older than the last");
    let mut tx = crate::db::Tx::begin(db).await.unwrap();
    crate::auth::epoch::advance_in(&mut tx, user).await.unwrap();
    tx.commit().await.unwrap();
    assert!(
        !store::accept_step(db, user, Epoch(0), 14).await.unwrap(),
        "a sign-in begun under an earlier credential epoch"
    );
    assert!(store::accept_step(db, user, Epoch(1), 14).await.unwrap());
    assert_eq!(
        store::state(db, user).await.unwrap(),
        State::Active {
            sealed: "v1:pending".into(),
            last_step: Some(14)
        }
    );
    test.finish().await;
}

#[tokio::test]
async fn renewals_at_once_leave_one_set_of_ten() {
    let test = TestDb::new().await;
    let user = test.user("ada@example.org").await;
    let tf = TwoFactor::new(test.db.clone(), &KEY);
    enabled(&tf, user).await;
    let renewals = (0..4).map(|_| {
        let tf = tf.clone();
        tokio::spawn(async move { tf.new_recovery_codes(user).await.map(|c| c.hashes()) })
    });
    let sets: Vec<Vec<String>> = futures::future::join_all(renewals)
        .await
        .into_iter()
        .map(|set| set.expect("no panic").expect("renewed"))
        .collect();
    assert_eq!(test.rows("gatehouse_recovery_codes", user).await, 10);
    let mut stored: Vec<String> = Vec::new();
    for hash in sets.iter().flatten() {
        let row = test
            .db
            .fetch_optional(
                test.db
                    .query(
                        "SELECT id FROM gatehouse_recovery_codes \
                         WHERE user_id = $1 AND code_hash = $2",
                    )
                    .bind(user)
                    .bind(hash.clone()),
            )
            .await
            .unwrap();
        if row.is_some() {
            stored.push(hash.clone());
        }
    }
    assert!(
        sets.contains(&stored),
        "the ten stored codes are one whole set"
    );
    test.finish().await;
}
