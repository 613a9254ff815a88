"""How a sandbox is given exactly its GPUs, and told so, on each backend.

A task holds GPUs by the index NVML and nvidia-smi give them on the runner (runner.host.hardware; PCI bus
order). Docker gets them as a device request for those very indices (`docker run --gpus
'"device=1,2"'`), which the NVIDIA Container Toolkit reads as NVML's indices, and the container sees
them renumbered 0..n-1; a local sandbox sees the host's devices, narrowed by CUDA_VISIBLE_DEVICES.
Either way what CUDA, the NVIDIA runtime and nvidia-smi read names the same GPUs, and none for a
task without GPUs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from docker.types import DeviceRequest

# CUDA numbers devices fastest-first unless told otherwise; NVML, nvidia-smi and the runner count them
# in PCI bus order.
DEVICE_ORDER = {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
# What a sandbox with GPUs may use of the driver: CUDA, and nvidia-smi (MLE-bench's start.sh asks it for
# the GPU's name). Docker passes none for the capability "gpu", and the toolkit's default could change.
DRIVER_CAPABILITIES = "compute,utility"


def docker_request(gpus: tuple[int, ...]) -> DeviceRequest:
    """Exactly these GPUs, by index, never a count the daemon would pick."""
    from docker.types import DeviceRequest  # the local backend runs where the Docker SDK need not

    return DeviceRequest(device_ids=[str(i) for i in gpus], capabilities=[["gpu"]])


def docker_environment(gpus: tuple[int, ...]) -> dict[str, str]:
    """The container's variables, saying what the device request says. NVIDIA_VISIBLE_DEVICES names the
    host's indices, `void` for none: an image's own `ENV NVIDIA_VISIBLE_DEVICES=all` would otherwise
    take every GPU of a host whose daemon runs the nvidia runtime by default. CUDA inside counts the
    container's devices from 0."""
    if not gpus:
        return {"NVIDIA_VISIBLE_DEVICES": "void", "CUDA_VISIBLE_DEVICES": ""}
    return {
        "NVIDIA_VISIBLE_DEVICES": _ids(gpus),
        "NVIDIA_DRIVER_CAPABILITIES": DRIVER_CAPABILITIES,
        **DEVICE_ORDER,
        "CUDA_VISIBLE_DEVICES": _ids(range(len(gpus))),
    }


def local_environment(gpus: tuple[int, ...]) -> dict[str, str]:
    """A subprocess sees every device of the host: CUDA is narrowed to the task's ("" for none)."""
    return {**DEVICE_ORDER, "CUDA_VISIBLE_DEVICES": _ids(gpus)}


def _ids(indices) -> str:
    return ",".join(str(i) for i in indices)
