"""How to reach a model: the backend options every run shares, in one object."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from biasatlas.backends.base import Backend, BackendError
from biasatlas.backends.http.options import EndpointSpec, check_fleet_name


class BackendOptions(BaseModel):
    """A model spec and the options of the backend that serves it (unset = the backend's default)."""

    model_config = ConfigDict(extra="forbid")
    model: str = "smollm2"
    base_url: str | None = None
    # a fleet: several servers of one model, each "URL" or "URL#N" (N: its concurrency) or {url, concurrency};
    # more than one needs a fleet name, which is the model's identity (http/fleet.py)
    endpoints: list[EndpointSpec] = Field(default_factory=list)
    fleet: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int | None = Field(default=None, ge=1)
    http: list[str] = Field(default_factory=list)  # NAME=VALUE settings of the HTTP backend
    adapter: str | None = None
    batch_size: int | None = Field(default=None, ge=1)
    dtype: str | None = None
    # generate mode over HTTP: ask for a JSON answer with an enum of the options where the server can
    structured: Literal["auto", "off"] | None = None
    # choice mode: an option's score is the sum of its token log-probabilities, or their mean per token
    choice_norm: Literal["sum", "mean"] | None = None

    @field_validator("fleet")
    @classmethod
    def _fleet_name(cls, name: str | None) -> str | None:
        return None if name is None else check_fleet_name(name)

    @model_validator(mode="after")
    def _one_fleet(self) -> BackendOptions:
        if len(self.endpoints) > 1 and self.fleet is None:
            raise ValueError(f"{len(self.endpoints)} servers and no fleet name: name the fleet (--fleet NAME); the "
                             "name is the model's identity, so adding or removing a server keeps the cache")
        if self.endpoints and self.base_url:
            raise ValueError("give base_url (one server) or endpoints (a fleet), not both")
        return self

    def open(self) -> Backend:
        """Build the backend; a setup problem is a one-line BackendError."""
        from biasatlas.backends.registry import make_backend

        options: dict[str, Any] = {
            "base_url": self.base_url,
            "endpoints": self.endpoints or None,
            "fleet": self.fleet,
            "api_key_env": self.api_key_env,
            "concurrency": self.concurrency,
            "adapter": self.adapter,
            "batch_size": self.batch_size,
            "dtype": self.dtype,
            "structured": self.structured,
            "choice_norm": self.choice_norm,
        }
        if self.http:
            from biasatlas.backends.openai_compat import parse_settings

            options.update(parse_settings(self.http))
        try:
            return make_backend(self.model, **{k: v for k, v in options.items() if v is not None})
        except ValidationError as exc:
            raise BackendError(
                "invalid backend option: "
                + "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
            ) from None
