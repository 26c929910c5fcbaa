//! `gatehouse check`: what `/readyz` and the start would find, a line a
//! check, non-zero when one fails.

use super::common::{cli, gatehouse, run, TestDb};

#[tokio::test]
async fn check_says_what_is_not_ready_and_exits_non_zero_until_it_is() {
    let test = TestDb::new().await;
    // A fresh database: no migrations applied yet.
    let before = cli(&test, &["check"], None);
    assert!(!before.status.success(), "{before:?}");
    assert!(
        before.stdout.contains("FAILED  database:"),
        "{}",
        before.stdout
    );
    assert!(
        before.stdout.contains("ok      configuration"),
        "{}",
        before.stdout
    );
    assert!(
        before.stdout.trim_end().ends_with("not ready"),
        "{}",
        before.stdout
    );
    assert!(!before.stdout.contains("://"), "no URL: {}", before.stdout);

    cli(&test, &["migrate"], None).assert_success();
    let after = cli(&test, &["check"], None);
    after.assert_success();
    assert!(
        after
            .stdout
            .contains("ok      database: answers; migrations are current"),
        "{}",
        after.stdout
    );
    assert!(after.stdout.contains("ok      mail:"), "{}", after.stdout);
    assert!(
        after.stdout.trim_end().ends_with("ready"),
        "{}",
        after.stdout
    );

    // A provider whose discovery document cannot be fetched.
    let mut command = gatehouse(&test);
    command.arg("check").env(
        "ROCKET_AUTH",
        "{oidc={acme={issuer=\"http://127.0.0.1:9/\",client_id=\"gh\",label=\"Acme\"}}}",
    );
    let provider = run(command, None);
    assert!(!provider.status.success(), "{provider:?}");
    assert!(
        provider.stdout.contains("FAILED  oidc.acme:"),
        "{}",
        provider.stdout
    );
    assert!(
        provider.stdout.contains("ok      database"),
        "{}",
        provider.stdout
    );
}
