"""The embedded broker: kombu's filesystem transport, made safe for several processes on a busy machine.

kombu's own transport writes a message file in place under its final name, and a reader takes a file
by moving it (to the system's temporary folder unless processed messages are kept, which on another
filesystem is a copy). So a worker could read a file still being written, or one another worker was
copying at the same moment: `JSONDecodeError` in `_get`, and the worker exited. Here:

- a publisher writes under a name outside the queue's pattern and renames it into place when
  complete (`os.replace` is atomic), so no reader ever sees part of a message;
- a reader claims a message by renaming it inside the queue folder (one rename wins, the others find
  the file gone and move on), then reads it under a shared lock, which waits for a writer still
  holding its exclusive lock (an older publisher that writes in place);
- a message that still does not decode after a short wait is set aside and logged, never raised: one
  bad file must not stop the worker (the recovery sweep re-queues work whose message was lost).

`settings.CELERY_BROKER_TRANSPORT` names this transport whenever the broker URL is `filesystem://`.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
import uuid
from queue import Empty

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads

log = logging.getLogger(__name__)

# How long a reader waits for a message that does not decode yet (a writer that writes in place).
DECODE_WAIT_S = 2.0
PART_SUFFIX = ".part"  # a message being written
CLAIMED_SUFFIX = ".claimed"  # a message a reader took
BAD_SUFFIX = ".bad"  # a message that never decoded, kept to look at


def _message_name(queue: str) -> str:
    # The name kombu's readers expect (time-ordered, then queue), so both transports share a folder.
    return f"{int(round(time.monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        name = _message_name(queue)
        final = os.path.join(self.data_folder_out, name)
        # A leading dot and a suffix keep the half-written file out of every queue's pattern.
        part = os.path.join(self.data_folder_out, f".{name}.{uuid.uuid4().hex[:8]}{PART_SUFFIX}")
        try:
            with open(part, "wb") as f:
                f.write(str_to_bytes(dumps(payload)))
            os.replace(part, final)
        except OSError as exc:
            _remove_quietly(part)
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc

    def _get(self, queue):
        wanted = f"{queue}.msg"
        for filename in sorted(os.listdir(self.data_folder_in)):
            if filename.partition(".")[2] != wanted:
                continue
            claimed = self._claim(filename)
            if claimed is None:
                continue  # another reader took it, or it vanished
            payload = self._read(claimed)
            if payload is not None:
                return payload
        raise Empty()

    def _claim(self, filename: str) -> str | None:
        source = os.path.join(self.data_folder_in, filename)
        claimed = os.path.join(self.data_folder_in, f".{filename}.{os.getpid()}-{uuid.uuid4().hex[:8]}{CLAIMED_SUFFIX}")
        try:
            os.rename(source, claimed)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ChannelError(f"Cannot take file {source!r} from the queue") from exc
        return claimed

    def _read(self, claimed: str):
        """The claimed message's payload, or None (logged, file set aside) if it never decodes."""
        deadline = time.monotonic() + DECODE_WAIT_S
        while True:
            try:
                with open(claimed, "rb") as f:
                    filesystem.lock(f, filesystem.LOCK_SH)  # waits for a writer that writes in place
                    try:
                        raw = f.read()
                    finally:
                        filesystem.unlock(f)
                payload = loads(bytes_to_str(raw))
            except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
                if time.monotonic() < deadline:
                    time.sleep(0.05)
                    continue
                self._set_aside(claimed, exc)
                return None
            except OSError as exc:
                raise ChannelError(f"Cannot read file {claimed!r} from queue.") from exc
            self._done(claimed)
            return payload

    def _done(self, claimed: str) -> None:
        if self.store_processed:
            name = os.path.basename(claimed)[1:].rsplit(".", 2)[0]  # the message's own name
            shutil.move(claimed, os.path.join(self.processed_folder, name))
        else:
            _remove_quietly(claimed)

    def _set_aside(self, claimed: str, exc: Exception) -> None:
        bad = claimed[: -len(CLAIMED_SUFFIX)] + BAD_SUFFIX
        try:
            os.replace(claimed, bad)
        except OSError:
            bad = claimed
        log.error("embedded broker: a message that does not decode was set aside as %s (%s)", bad, exc)


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


class Transport(filesystem.Transport):
    Channel = Channel
