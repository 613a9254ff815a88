"""Login throttling: after a few failed passwords for one account (or many from one address), the
login form refuses further tries for a while, right ones included, so passwords cannot be guessed
at speed. Counted in the cache (set MEDALBOARD_CACHE_URL for several web processes)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.views import LoginView
from django.core.cache import cache
from django.template.response import TemplateResponse

ADDRESS_FACTOR = 4  # one address may try a few accounts (people behind one NAT), not hundreds


def _keys(request) -> list[tuple[str, int]]:
    username = (request.POST.get("username") or "").strip().lower()[:150]
    address = request.META.get("REMOTE_ADDR", "")
    allowed = settings.LOGIN_FAILURES_ALLOWED
    return [(f"login-failures:user:{username}", allowed),
            (f"login-failures:addr:{address}", allowed * ADDRESS_FACTOR)]


class ThrottledLoginView(LoginView):
    def post(self, request, *args, **kwargs):
        if any((cache.get(key) or 0) >= limit for key, limit in _keys(request)):
            minutes = max(1, settings.LOGIN_THROTTLE_SECONDS // 60)
            return TemplateResponse(request, self.template_name, {
                "form": self.get_form_class()(request), "throttled":
                f"Too many failed logins. Try again in {minutes} minutes."}, status=429)
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        for key, _ in _keys(self.request):
            cache.add(key, 0, settings.LOGIN_THROTTLE_SECONDS)  # the window starts at the first failure
            try:
                cache.incr(key)
            except ValueError:  # expired between add and incr
                cache.set(key, 1, settings.LOGIN_THROTTLE_SECONDS)
        return super().form_invalid(form)
