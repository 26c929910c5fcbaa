// Gatehouse screens: upgrades the forms to the JSON endpoints and follows the
// intent loop. Without this script every form still works by plain posts.
(function () {
  "use strict";
  function embedded(id) {
    var source = document.getElementById(id);
    return source ? JSON.parse(source.textContent) : {};
  }
  var messages = embedded("gatehouse-messages");
  // The screen of each intent kind answered on one, by the kind's wire name.
  var intentScreens = embedded("gatehouse-intents");

  function text(code, data) {
    var words = messages[code] || code;
    var seconds = data && data.retry_after !== undefined ? String(data.retry_after) : "";
    return words.replace("{seconds}", seconds);
  }

  function show(kind, words) {
    var box = document.getElementById("form-message");
    if (!box) return;
    box.className = "form-message " + kind;
    box.textContent = words;
  }

  function clearErrors(form) {
    form.querySelectorAll(".field-error").forEach(function (p) { p.textContent = ""; });
    form.querySelectorAll("[aria-invalid]").forEach(function (el) { el.removeAttribute("aria-invalid"); });
    form.querySelectorAll("[aria-describedby='form-message']").forEach(function (el) {
      var named = el.name ? el : el.querySelector("[name]");
      if (named) el.setAttribute("aria-describedby", named.name + "-error");
    });
    show("", "");
  }

  // Sudo mode asked for a confirmation first: the box that gives it opens.
  function askToConfirm() {
    var box = document.querySelector("details[data-reauth]");
    if (!box) return;
    box.open = true;
    var field = box.querySelector("input[name=password]");
    if (field) field.focus();
  }

  function showErrors(form, data) {
    if (data && data.message === "reauth_required") {
      show("error", text("reauth_required"));
      return askToConfirm();
    }
    var errors = (data && data.errors) || {};
    var summary = text((data && data.message) || "server_error", data);
    var first = null;
    Object.keys(errors).forEach(function (field) {
      var codes = errors[field] || [];
      var target = form.querySelector("[data-error-for='" + field + "']") ||
        document.getElementById(field + "-error");
      var words = codes.length ? text(codes[0], data) : "";
      // A field error that repeats the form message is announced once, and
      // the field points at the form message instead of its empty error.
      var repeated = words === summary;
      if (target && !repeated) target.textContent = words;
      var inputs = form.querySelectorAll("[name='" + field + "']:not([type=hidden])");
      inputs.forEach(function (input) {
        input.setAttribute("aria-invalid", "true");
        var described = input.closest("fieldset[aria-describedby]") || input;
        if (repeated) described.setAttribute("aria-describedby", "form-message");
        else if (target) described.setAttribute("aria-describedby", target.id);
      });
      if (inputs.length && !first) first = inputs[0];
    });
    show("error", summary);
    if (first) first.focus();
  }

  function follow(next) {
    if (!next) return;
    if (next.kind === "redirect") window.location.assign(next.payload.target);
    else if (intentScreens[next.kind]) window.location.assign(intentScreens[next.kind]);
  }

  function fields(form) {
    var body = {};
    Array.prototype.forEach.call(form.elements, function (el) {
      if (!el.name) return;
      if (el.type === "checkbox") body[el.name] = el.checked;
      else if (el.type === "radio") { if (el.checked) body[el.name] = Number(el.value); }
      else body[el.name] = el.value;
    });
    return body;
  }

  // Recovery codes from a JSON answer, shown once in the two-factor section.
  function showCodes(codes) {
    var section = document.getElementById("two-factor");
    if (!section || !codes) return;
    var list = document.createElement("ul");
    list.className = "codes";
    list.setAttribute("data-recovery-codes", "");
    codes.forEach(function (code) {
      var item = document.createElement("li");
      var text = document.createElement("code");
      text.textContent = code;
      item.appendChild(text);
      list.appendChild(item);
    });
    section.querySelectorAll("[data-recovery-codes]").forEach(function (old) { old.remove(); });
    section.appendChild(list);
  }

  // A new enrolment's key and QR code, from the answer that began it: the
  // only answer that ever shows them (the account screen does not).
  function showEnrolment(form, data) {
    var box = document.querySelector("[data-enrolment]");
    var key = box && box.querySelector("[data-enrolment-key]");
    if (!key || !data.secret) return reloadAccount("two_factor_pending");
    key.querySelector("[data-qr]").innerHTML = data.qr_svg;
    key.querySelector("[data-secret]").textContent = data.secret;
    key.hidden = false;
    box.hidden = false;
    document.querySelectorAll("[data-two-factor-state]").forEach(function (p) { p.remove(); });
    form.remove();
    show("success", text("two_factor_pending"));
  }

  // The account screen after a change: reloaded, with the message kept.
  function reloadAccount(message) {
    window.location.assign("/account?notice=" + encodeURIComponent(message));
  }

  function succeeded(form, data) {
    switch (form.dataset.gatehouse) {
      case "login":
        if (data.message === "two_factor_required") return window.location.assign("/login/two-factor");
        return follow(data.next);
      case "two-factor": return follow(data.next);
      case "change-password": form.reset(); return show("success", text("password_changed"));
      case "end-session":
        var row = form.closest("[data-session]");
        if (row) row.remove();
        return show("success", text("session_ended"));
      case "end-others": return reloadAccount("other_sessions_ended");
      case "two-factor-enable": return showEnrolment(form, data);
      case "two-factor-disable": return reloadAccount("two_factor_disabled");
      case "two-factor-confirm":
        // Two-factor sign-in is on: the key and QR code are no longer needed.
        document.querySelectorAll("[data-enrolment]").forEach(function (old) { old.remove(); });
        document.querySelectorAll("[data-recovery-codes-intro]").forEach(function (p) { p.hidden = false; });
        show("success", text(data.message));
        return showCodes(data.recovery_codes);
      case "recovery-codes":
        form.reset();
        show("success", text(data.message));
        return showCodes(data.recovery_codes);
      case "passkey-remove": return reloadAccount("passkey_removed");
      // Linking leaves for the provider's pages; its callback comes back
      // to the account screen.
      case "oidc-link":
      case "oidc-confirm": return window.location.assign(data.redirect);
      case "confirm-identity": return reloadAccount("identity_confirmed");
      case "oidc-unlink": return reloadAccount("oidc_unlinked");
      // A script's user code answered: the request is gone from the page.
      case "device-approve":
      case "device-deny":
        document.querySelectorAll("[data-device-request]").forEach(function (box) { box.remove(); });
        return show("success", text(data.message));
      case "forgot": form.reset(); return show("success", text("reset_link_sent"));
      case "set-password": return window.location.assign("/login?notice=reset_success");
      // Any intent's screen (`org-setup`: its older name, in hosts' templates).
      case "intent":
      case "org-setup":
        if (data.status === "satisfied") return follow(data.next);
        if (data.status === "needs_more_input") return show("error", text("needs_more_input"));
        return showErrors(form, { message: "error", errors: data.errors });
    }
  }

  document.querySelectorAll("form[data-gatehouse]").forEach(function (form) {
    // Signing out is a plain post; adding a passkey has its own ceremony;
    // a provider's button leaves for the provider's own pages.
    var plain = ["logout", "passkey-add", "oidc"];
    if (plain.indexOf(form.dataset.gatehouse) >= 0) return;
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var button = form.querySelector("button[type=submit]");
      clearErrors(form);
      if (button) button.disabled = true;
      fetch(form.getAttribute("action"), {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "Accept": "application/json" },
        body: JSON.stringify(fields(form))
      }).then(function (response) {
        return response.json().catch(function () { return {}; }).then(function (data) {
          if (response.ok) succeeded(form, data);
          else showErrors(form, data);
        });
      }).catch(function () {
        show("error", text("server_error"));
      }).then(function () {
        if (button) button.disabled = false;
      });
    });
  });

  // Passkeys (WebAuthn). Their controls are served hidden and shown here,
  // only where the browser can use them; the server sends options and takes
  // answers as JSON whose binary fields are base64url.
  var webauthn = !!(window.PublicKeyCredential && navigator.credentials &&
    navigator.credentials.create && navigator.credentials.get);

  function fromBase64url(value) {
    var base64 = String(value).replace(/-/g, "+").replace(/_/g, "/");
    while (base64.length % 4) base64 += "=";
    var binary = atob(base64);
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes.buffer;
  }

  function toBase64url(buffer) {
    var bytes = new Uint8Array(buffer);
    var binary = "";
    for (var i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
    return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  // The options without members the server left empty (`null`), which the
  // browser's dictionaries refuse.
  function withoutNulls(value) {
    if (Array.isArray(value)) return value.map(withoutNulls);
    if (!value || typeof value !== "object") return value;
    var copy = {};
    Object.keys(value).forEach(function (key) {
      if (value[key] !== null) copy[key] = withoutNulls(value[key]);
    });
    return copy;
  }

  function withIds(list) {
    return (list || []).map(function (c) {
      return Object.assign({}, c, { id: fromBase64url(c.id) });
    });
  }

  function creationOptions(json) {
    json = withoutNulls(json);
    if (PublicKeyCredential.parseCreationOptionsFromJSON) {
      return PublicKeyCredential.parseCreationOptionsFromJSON(json);
    }
    return Object.assign({}, json, {
      challenge: fromBase64url(json.challenge),
      user: Object.assign({}, json.user, { id: fromBase64url(json.user.id) }),
      excludeCredentials: withIds(json.excludeCredentials)
    });
  }

  function requestOptions(json) {
    json = withoutNulls(json);
    if (PublicKeyCredential.parseRequestOptionsFromJSON) {
      return PublicKeyCredential.parseRequestOptionsFromJSON(json);
    }
    return Object.assign({}, json, {
      challenge: fromBase64url(json.challenge),
      allowCredentials: withIds(json.allowCredentials)
    });
  }

  // The authenticator's answer as the server reads it.
  function credentialJSON(credential) {
    if (typeof credential.toJSON === "function") return credential.toJSON();
    var r = credential.response;
    var response = { clientDataJSON: toBase64url(r.clientDataJSON) };
    if (r.attestationObject) {
      response.attestationObject = toBase64url(r.attestationObject);
      if (r.getTransports) response.transports = r.getTransports();
    }
    if (r.authenticatorData) response.authenticatorData = toBase64url(r.authenticatorData);
    if (r.signature) response.signature = toBase64url(r.signature);
    if (r.userHandle) response.userHandle = toBase64url(r.userHandle);
    return {
      id: credential.id,
      rawId: toBase64url(credential.rawId),
      type: credential.type,
      response: response,
      clientExtensionResults: credential.getClientExtensionResults ? credential.getClientExtensionResults() : {}
    };
  }

  // A JSON post; answers `{ok, status, data}`.
  function post(path, body) {
    var init = {
      method: "POST",
      credentials: "same-origin",
      headers: { "Accept": "application/json" }
    };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    return fetch(path, init).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        return { ok: response.ok, status: response.status, data: data };
      });
    });
  }

  // A server answer that ends a ceremony.
  function Refused(answer) { this.answer = answer; }

  function refusedUnlessOk(answer) {
    if (!answer.ok) throw new Refused(answer);
    return answer;
  }

  // Why a ceremony did not end, told on `form`: the server's words, or the
  // browser's (cancelled, already registered); our own abort says nothing.
  function ceremonyFailed(form, error) {
    if (error instanceof Refused) return showErrors(form, error.answer.data);
    var name = error && error.name;
    if (name === "AbortError") return;
    if (name === "NotAllowedError") return show("error", text("passkey_cancelled"));
    if (name === "InvalidStateError") return show("error", text("passkey_exists"));
    show("error", text(error instanceof TypeError ? "server_error" : "passkey_failed"));
  }

  function busy(button, on) {
    if (button) button.disabled = on;
  }

  // The sign-in screen: the button (a modal request) and the address
  // field's autofill (a conditional request, started on load and aborted
  // before the button's begins; each request has its own challenge).
  function signInWithPasskeys(form) {
    var button = document.querySelector("[data-passkey-sign-in]");
    var autofill = null;
    var autofillDone = Promise.resolve();

    function remembered() {
      var box = form.querySelector("[name=remember]");
      return !!(box && box.checked);
    }

    function signIn(mediation, signal) {
      return post("/auth/passkey/options").then(refusedUnlessOk).then(function (answer) {
        var request = { publicKey: requestOptions(answer.data.publicKey) };
        if (mediation) request.mediation = mediation;
        if (signal) request.signal = signal;
        return navigator.credentials.get(request);
      }).then(function (credential) {
        if (!credential) throw new DOMException("no passkey chosen", "NotAllowedError");
        return post("/auth/passkey/login", {
          credential: credentialJSON(credential),
          remember: remembered()
        });
      }).then(refusedUnlessOk).then(function (answer) {
        succeeded(form, answer.data);
      });
    }

    function startAutofill() {
      var check = PublicKeyCredential.isConditionalMediationAvailable;
      if (!check || !window.AbortController) return;
      autofillDone = check.call(PublicKeyCredential).then(function (available) {
        if (!available) return;
        autofill = new AbortController();
        return signIn("conditional", autofill.signal).catch(function (error) {
          // Only what the server refused is worth telling: the rest is the
          // autofill being left or aborted.
          if (error instanceof Refused) ceremonyFailed(form, error);
        });
      }).catch(function () {});
    }

    if (button) {
      button.addEventListener("click", function () {
        clearErrors(form);
        busy(button, true);
        if (autofill) autofill.abort();
        autofill = null;
        // The autofill's request has ended (and its options were answered)
        // before the button's begins.
        autofillDone.then(function () {
          return signIn();
        }).catch(function (error) {
          ceremonyFailed(form, error);
          startAutofill();
        }).then(function () {
          busy(button, false);
        });
      });
    }
    startAutofill();
  }

  // The second step: one of the pending user's passkeys instead of a code.
  function secondStepWithPasskeys(form) {
    var button = document.querySelector("[data-passkey-second-step]");
    if (!button) return;
    button.addEventListener("click", function () {
      clearErrors(form);
      busy(button, true);
      post("/auth/two-factor/passkey-options").then(function (answer) {
        if (answer.status === 404) {
          document.querySelectorAll("[data-passkey]").forEach(function (el) { el.hidden = true; });
          show("error", text("passkey_none"));
          return null;
        }
        refusedUnlessOk(answer);
        return navigator.credentials.get({ publicKey: requestOptions(answer.data.publicKey) })
          .then(function (credential) {
            if (!credential) throw new DOMException("no passkey chosen", "NotAllowedError");
            return post("/auth/two-factor-challenge", { credential: credentialJSON(credential) });
          }).then(refusedUnlessOk).then(function (answer) {
            succeeded(form, answer.data);
          });
      }).catch(function (error) {
        ceremonyFailed(form, error);
      }).then(function () {
        busy(button, false);
      });
    });
  }

  // The account screen: password again, then the authenticator makes the
  // passkey, then it is stored under its name.
  function addingPasskeys(form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var button = form.querySelector("button[type=submit]");
      var input = fields(form);
      clearErrors(form);
      // Checked before the authenticator is asked, which would otherwise
      // make a passkey the server then refuses to store.
      var name = (input.name || "").trim();
      if (!name) return showErrors(form, { message: "validation_failed", errors: { name: ["required"] } });
      busy(button, true);
      post("/auth/passkeys/options", { password: input.password }).then(refusedUnlessOk).then(function (answer) {
        return navigator.credentials.create({ publicKey: creationOptions(answer.data.publicKey) });
      }).then(function (credential) {
        return post("/auth/passkeys", { name: name, credential: credentialJSON(credential) });
      }).then(refusedUnlessOk).then(function () {
        reloadAccount("passkey_added");
      }).catch(function (error) {
        ceremonyFailed(form, error);
        busy(button, false);
      });
    });
  }

  // Sudo mode: one of the user's own passkeys confirms who they are.
  function confirmingWithPasskeys(button) {
    var box = button.closest("details") || document;
    button.addEventListener("click", function () {
      var form = box.querySelector("form") || document.createElement("form");
      clearErrors(form);
      busy(button, true);
      post("/auth/confirm/passkey-options").then(refusedUnlessOk).then(function (answer) {
        return navigator.credentials.get({ publicKey: requestOptions(answer.data.publicKey) });
      }).then(function (credential) {
        if (!credential) throw new DOMException("no passkey chosen", "NotAllowedError");
        return post("/auth/confirm", { credential: credentialJSON(credential) });
      }).then(refusedUnlessOk).then(function () {
        reloadAccount("identity_confirmed");
      }).catch(function (error) {
        ceremonyFailed(form, error);
        busy(button, false);
      });
    });
  }

  // Times in the browser's own zone and the page's language: relative
  // within the last day, else the date and time (`<time data-when>`).
  var lang = document.documentElement.lang === "de" ? "de-DE" : "en-GB";
  function rewriteTimes() {
    if (!window.Intl || !Intl.DateTimeFormat) return;
    var absolute = new Intl.DateTimeFormat(lang, { dateStyle: "medium", timeStyle: "short" });
    var relative = Intl.RelativeTimeFormat ? new Intl.RelativeTimeFormat(lang, { numeric: "auto" }) : null;
    document.querySelectorAll("time[data-when]").forEach(function (el) {
      var at = new Date(el.getAttribute("datetime"));
      if (isNaN(at.getTime())) return;
      var full = absolute.format(at);
      var age = (Date.now() - at.getTime()) / 1000;
      el.title = full;
      if (!relative || age < -60 || age >= 86400) { el.textContent = full; return; }
      if (age < 60) el.textContent = relative.format(0, "second");
      else if (age < 3600) el.textContent = relative.format(-Math.floor(age / 60), "minute");
      else el.textContent = relative.format(-Math.floor(age / 3600), "hour");
    });
  }
  rewriteTimes();

  // The providers' form takes the address form's remember-me box.
  var providers = document.querySelector("form[data-gatehouse=oidc]");
  var remember = document.getElementById("remember");
  if (providers && remember) {
    var own = providers.querySelector("[data-oidc-remember]");
    if (own) own.hidden = true;
    providers.addEventListener("submit", function () {
      var box = document.getElementById("oidc-remember");
      if (box) box.checked = remember.checked;
    });
  }

  if (webauthn) {
    var login = document.querySelector("form[data-gatehouse=login]");
    var secondStep = document.querySelector("form[data-gatehouse=two-factor]");
    var adding = document.querySelector("form[data-gatehouse=passkey-add]");
    if (login && document.querySelector("[data-passkey-sign-in]")) signInWithPasskeys(login);
    if (secondStep) secondStepWithPasskeys(secondStep);
    if (adding) addingPasskeys(adding);
    var confirming = document.querySelector("[data-confirm-passkey]");
    if (confirming) confirmingWithPasskeys(confirming);
    document.querySelectorAll("[data-passkey]").forEach(function (el) { el.hidden = false; });
    document.querySelectorAll("[data-passkey-note]").forEach(function (el) { el.hidden = true; });
  }
})();
