"""The core's errors that are the user's fault, kept apart from the modules that
raise them (which re-export them) so that catching them -- :func:`truedeal.cli.main`,
the job commands -- loads neither pydantic nor the engine."""


class SpecError(ValueError):
    """An invalid spec.  The message is always one line, suitable after ``"error: "``."""

    def __init__(self, message: str) -> None:
        text = str(message)
        if "\n" in text or "\r" in text:
            text = " ".join(text.split())
        super().__init__(text)


class Impossible(ValueError):
    """No deal satisfies the spec."""


class TooLargeToDeal(ValueError):
    """A plan that counts exactly but whose draws would need more memory than
    its bound (the count stands; the message says how much, in one line)."""


class SetError(ValueError):
    """A bad tournament set file: one line that names the problem."""
