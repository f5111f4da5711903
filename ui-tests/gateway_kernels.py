"""The kernel manager of the UI tests' Kernel Gateway: a kernel starts in the folder JupyterLab names in
KERNEL_WORKING_DIR (its notebook's folder), as Enterprise Gateway does with a shared filesystem
(EG_MIRROR_WORKING_DIRS), so that a run finds the data files beside the notebook. The Kernel Gateway itself
starts every kernel in its own working directory."""

import os

from kernel_gateway.services.kernels.manager import KernelGatewayIOLoopKernelManager


class WorkingDirKernelManager(KernelGatewayIOLoopKernelManager):
    async def _async_launch_kernel(self, kernel_cmd, **kw):
        folder = kw.get("env", {}).get("KERNEL_WORKING_DIR")
        if folder and os.path.isdir(folder):
            kw["cwd"] = folder
        return await super()._async_launch_kernel(kernel_cmd, **kw)
