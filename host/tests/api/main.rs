//! Integration tests: the wire contract of DESIGN.md, as a client sees it.

#[path = "../common/database.rs"]
mod database;

mod account;
mod breached;
mod browser_safety;
mod custom_host;
mod dbsc;
mod dbsc_client;
mod device_grant;
mod device_grant_client;
mod ended_sessions;
mod fixtures;
mod helpers;
mod hostile_input;
mod intended;
mod intents;
mod login;
mod login_validation;
mod mailbox;
mod notices;
mod odata_access;
mod odata_apply;
mod odata_batch;
mod odata_errors;
mod odata_expand;
mod odata_filter;
mod odata_fixture;
mod odata_limits;
mod odata_numbers;
mod odata_paging;
mod odata_plans;
mod odata_resources;
mod odata_search;
mod odata_seek;
mod odata_stream;
mod odata_tree;
mod odata_uuid_keys;
mod oidc;
#[path = "../oidc/harness.rs"]
#[allow(dead_code)]
mod oidc_provider;
mod ops;
mod ops_metrics;
mod outage;
mod passkeys;
mod passwords;
mod remember;
mod reset;
mod reset_durability;
mod reset_mail;
mod screens;
mod scripts_tokens;
mod scripts_tokens_screen;
mod second_step;
mod security_events;
mod sessions;
mod sign_in_capacity;
mod stolen_cookies;
mod sudo;
mod throttle;
mod two_factor;
