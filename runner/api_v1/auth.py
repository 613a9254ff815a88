"""Who is asking: `Authorization: Runner <token>` names a runner; a revoked token is refused."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions

from runner.api_v1 import tokens
from runner.models import Runner

KEYWORD = "Runner"


class RunnerTokenAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1").split()
        if len(header) != 2 or header[0] != KEYWORD:
            return None
        runner = tokens.runner_for(header[1])
        if runner is None:
            raise exceptions.AuthenticationFailed("unknown runner token")
        if runner.token_revoked_at is not None:
            raise exceptions.AuthenticationFailed("this runner's token was revoked")
        return AnonymousUser(), runner

    def authenticate_header(self, request) -> str:
        return KEYWORD


class IsRunner(permissions.BasePermission):
    def has_permission(self, request, view) -> bool:
        return isinstance(request.auth, Runner)


class RunnerTokenScheme(OpenApiAuthenticationExtension):
    target_class = RunnerTokenAuthentication
    name = "runnerToken"

    def get_security_definition(self, auto_schema) -> dict:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": 'A runner token (manage.py create_runner) with the prefix "Runner"',
        }
