common-language = Language
common-terms = Terms
common-privacy = Privacy
common-cookies = Cookies
common-home = Home
