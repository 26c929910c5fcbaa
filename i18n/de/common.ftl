common-language = Sprache
common-terms = AGB
common-privacy = Datenschutz
common-cookies = Cookies
common-home = Startseite
