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

  function showErrors(form, data) {
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
    if (form.dataset.gatehouse === "logout") return;
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
})();
