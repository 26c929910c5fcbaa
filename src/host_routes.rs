//! The host's named routes Gatehouse links and redirects to.

/// Paths of the host's named routes, resolved at ignite.
#[derive(Debug, Clone)]
pub struct HostRoutes {
    /// Path of the `home` route (every logout lands here).
    pub home: String,
    /// Path of the `dashboard` route (default post-login landing).
    pub dashboard: String,
    /// Path of `terms`, when the host has one.
    pub terms: Option<String>,
    /// Path of `privacy`, when the host has one.
    pub privacy: Option<String>,
    /// Path of `cookies`, when the host has one.
    pub cookies: Option<String>,
}
