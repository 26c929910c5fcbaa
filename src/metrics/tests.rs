use super::*;

    fn page(metrics: &Metrics) -> String {
        metrics
            .exposition(Held::default(), Format::Prometheus)
            .expect("on")
    }

    #[test]
    fn counts_move_exactly_with_what_happened() {
        let metrics = Metrics::on();
        for _ in 0..3 {
            metrics.http("/auth/login", "POST", 303, Duration::from_millis(3));
        }
        metrics.throttle_refusal("login");
        let text = page(&metrics);
        assert!(
            text.contains(
                r#"gatehouse_http_requests_total{method="POST",route="/auth/login",status="303"} 3"#
            ),
            "{text}"
        );
        assert!(
            text.contains(r#"gatehouse_throttle_refusals_total{kind="login"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(r#"gatehouse_build_info{version=""#),
            "{text}"
        );
    }

    #[test]
    fn metrics_off_count_nothing_and_expose_nothing() {
        let metrics = Metrics::off();
        metrics.http("/", "GET", 200, Duration::ZERO);
        assert!(metrics
            .exposition(Held::default(), Format::Prometheus)
            .is_none());
    }

    #[test]
    fn openmetrics_is_written_to_a_scraper_that_asks_for_it() {
        let metrics = Metrics::on();
        metrics.auth_event("failed", "password");
        let page = metrics
            .exposition(Held::default(), Format::OpenMetrics)
            .expect("on");
        assert!(page.ends_with("# EOF\n"), "{page}");
        assert!(
            page.contains("# TYPE gatehouse_auth_events counter"),
            "{page}"
        );
        assert!(
            page.contains(r#"gatehouse_auth_events_total{event="failed",method="password"} 1"#),
            "{page}"
        );
        let text = self::page(&metrics);
        assert!(!text.contains("# EOF"), "{text}");
        assert!(
            text.contains("# TYPE gatehouse_auth_events_total counter"),
            "{text}"
        );
    }

    #[test]
    fn the_format_follows_the_accept_header() {
        let open = "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.4";
        assert_eq!(Format::asked(Some(open)), Format::OpenMetrics);
        assert_eq!(
            Format::asked(Some("Application/OpenMetrics-Text")),
            Format::OpenMetrics
        );
        assert_eq!(Format::asked(None), Format::Prometheus);
        assert_eq!(Format::asked(Some("text/plain")), Format::Prometheus);
        assert_eq!(Format::asked(Some("*/*")), Format::Prometheus);
        assert_eq!(
            Format::asked(Some("application/openmetrics-text; q=0")),
            Format::Prometheus
        );
    }

    #[test]
    fn the_process_is_described_unprefixed() {
        let text = page(&Metrics::on());
        assert!(text.contains("\nprocess_resident_memory_bytes "), "{text}");
        assert!(text.contains("\nprocess_cpu_seconds_total "), "{text}");
        assert!(!text.contains("gatehouse_process_"), "{text}");
    }
