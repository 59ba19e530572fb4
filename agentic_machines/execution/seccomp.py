"""The seccomp filter of a namespaced worker: the system calls model code may not make.

A namespaced worker shares the host's kernel: this module builds the classic-BPF seccomp
program that refuses (``EPERM``) the system calls that are the usual first steps of a
kernel exploit and that a worker never needs, assembled by hand (no installable binding
of libseccomp exists for a virtual environment). Which calls, why, and the program's
layout: docs/threat_model.md (the seccomp filter). Supported: x86-64 and AArch64;
elsewhere :func:`program` is None and the level says so.

>>> prog = program("x86_64")
>>> len(prog) % 8, len(prog) // 8 < 128
(0, True)
>>> program("sparc") is None
True
"""

from __future__ import annotations

import errno
import platform
import struct

__all__ = ["program", "install", "DENIED", "NAMESPACE_FLAGS"]

# BPF opcodes (linux/bpf_common.h)
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS: A = the 32-bit word at offset k
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K: jump if A & k
_RET = 0x06  # BPF_RET | BPF_K
_AND = 0x54  # BPF_ALU | BPF_AND | BPF_K: A &= k
_RSH = 0x74  # BPF_ALU | BPF_RSH | BPF_K: A >>= k

# seccomp return values (linux/seccomp.h)
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000

NAMESPACE_FLAGS = (
    0x00020000  # CLONE_NEWNS
    | 0x02000000  # CLONE_NEWCGROUP
    | 0x04000000  # CLONE_NEWUTS
    | 0x08000000  # CLONE_NEWIPC
    | 0x10000000  # CLONE_NEWUSER
    | 0x20000000  # CLONE_NEWPID
    | 0x40000000  # CLONE_NEWNET
    | 0x00000080  # CLONE_NEWTIME
)
"""The ``clone`` flags that create a namespace: refused."""

CLONE_THREAD = 0x00010000
"""The ``clone`` flag that makes a thread: refused (a block's thread would outlive it)."""

DENIED = (
    "io_uring_setup io_uring_enter io_uring_register bpf perf_event_open userfaultfd keyctl "
    "add_key request_key ptrace process_vm_readv process_vm_writev pidfd_getfd unshare setns "
    "timer_create mount umount2 pivot_root fsopen fsconfig fsmount fspick move_mount "
    "open_tree mount_setattr open_by_handle_at name_to_handle_at kexec_load kexec_file_load "
    "init_module finit_module delete_module reboot swapon swapoff syslog acct quotactl "
    "iopl ioperm mq_open shmget msgget semget"
).split()
"""The system calls refused outright (``EPERM``), where the machine has them."""

IOCTL_FAMILIES = (0x4C, 0xAE)
"""``ioctl`` request types refused: the loop devices' (``LOOP_*``) and KVM's."""

# (audit arch, x32 bit or None, call numbers) per machine (asm/unistd_64.h, asm-generic/unistd.h)
_TABLES = {
    "x86_64": (
        0xC000003E,  # AUDIT_ARCH_X86_64
        0x40000000,  # __X32_SYSCALL_BIT
        {
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "bpf": 321,
            "perf_event_open": 298,
            "userfaultfd": 323,
            "keyctl": 250,
            "add_key": 248,
            "request_key": 249,
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "pidfd_getfd": 438,
            "unshare": 272,
            "setns": 308,
            "clone": 56,
            "clone3": 435,
            "socket": 41,
            "socketpair": 53,
            "ioctl": 16,
            "timer_create": 222,
            "mq_open": 240,
            "shmget": 29,
            "semget": 64,
            "msgget": 68,
            "mount": 165,
            "umount2": 166,
            "pivot_root": 155,
            "open_tree": 428,
            "move_mount": 429,
            "fsopen": 430,
            "fsconfig": 431,
            "fsmount": 432,
            "fspick": 433,
            "mount_setattr": 442,
            "open_by_handle_at": 304,
            "name_to_handle_at": 303,
            "kexec_load": 246,
            "kexec_file_load": 320,
            "init_module": 175,
            "finit_module": 313,
            "delete_module": 176,
            "reboot": 169,
            "swapon": 167,
            "swapoff": 168,
            "syslog": 103,
            "acct": 163,
            "quotactl": 179,
            "iopl": 172,
            "ioperm": 173,
        },
    ),
    "aarch64": (
        0xC00000B7,  # AUDIT_ARCH_AARCH64
        None,
        {
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "bpf": 280,
            "perf_event_open": 241,
            "userfaultfd": 282,
            "keyctl": 219,
            "add_key": 217,
            "request_key": 218,
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "pidfd_getfd": 438,
            "unshare": 97,
            "setns": 268,
            "clone": 220,
            "clone3": 435,
            "socket": 198,
            "socketpair": 199,
            "ioctl": 29,
            "timer_create": 107,
            "mq_open": 180,
            "msgget": 186,
            "semget": 190,
            "shmget": 194,
            "mount": 40,
            "umount2": 39,
            "pivot_root": 41,
            "open_tree": 428,
            "move_mount": 429,
            "fsopen": 430,
            "fsconfig": 431,
            "fsmount": 432,
            "fspick": 433,
            "mount_setattr": 442,
            "open_by_handle_at": 265,
            "name_to_handle_at": 264,
            "kexec_load": 104,
            "kexec_file_load": 294,
            "init_module": 105,
            "finit_module": 273,
            "delete_module": 106,
            "reboot": 142,
            "swapon": 224,
            "swapoff": 225,
            "syslog": 116,
            "acct": 89,
            "quotactl": 60,
        },
    ),
}
_AF_UNIX = 1


def program(machine: str | None = None) -> bytes | None:
    """The filter for ``machine`` (default: this one) as raw ``sock_filter`` instructions.

    None when the machine is not one the tables cover (the caller runs without a filter
    and says so).

    >>> program("aarch64")[:8] == struct.pack("<HBBI", _LD_W_ABS, 0, 0, 4)
    True
    """
    table = _TABLES.get(machine or platform.machine())
    if table is None:
        return None
    arch, x32, numbers = table
    # Assembled with labels; a jump's target is resolved to a relative offset at the end.
    code: list[tuple[int, int | str, int | str, int]] = []  # a jump: an offset or a label

    def emit(op: int, k: int, jt: int | str = 0, jf: int | str = 0) -> None:
        code.append((op, jt, jf, k))

    emit(_LD_W_ABS, 4)  # A = arch
    emit(_JEQ, arch, 0, "deny")
    emit(_LD_W_ABS, 0)  # A = nr
    if x32 is not None:
        emit(_JGE, x32, "deny", 0)
    for name in DENIED:
        if name in numbers:  # iopl and ioperm are x86's only
            emit(_JEQ, numbers[name], "deny", 0)
    emit(_JEQ, numbers["clone"], "clone", 0)
    emit(_JEQ, numbers["clone3"], "enosys", 0)
    emit(_JEQ, numbers["socket"], "socket", 0)
    emit(_JEQ, numbers["socketpair"], "socket", 0)
    emit(_JEQ, numbers["ioctl"], "ioctl", 0)
    emit(_RET, _ALLOW)  # every other call
    labels = {"clone": len(code)}
    emit(_LD_W_ABS, 16)  # A = the low word of args[0]: clone's flags
    emit(_JSET, NAMESPACE_FLAGS | CLONE_THREAD, "deny", "allow")
    labels["socket"] = len(code)
    emit(_LD_W_ABS, 16)  # A = args[0]: the socket's domain
    emit(_JEQ, _AF_UNIX, "deny", "allow")
    labels["ioctl"] = len(code)
    emit(_LD_W_ABS, 24)  # A = the low word of args[1]: the request
    emit(_RSH, 8)  # its type byte (_IOC_TYPE): bits 8-15
    emit(_AND, 0xFF)
    for family in IOCTL_FAMILIES:
        emit(_JEQ, family, "deny", 0)
    emit(_RET, _ALLOW)
    labels["enosys"] = len(code)
    emit(_RET, _ERRNO | errno.ENOSYS)
    labels["deny"] = len(code)
    emit(_RET, _ERRNO | errno.EPERM)
    labels["allow"] = len(code)
    emit(_RET, _ALLOW)

    out = b""
    for i, (op, jt, jf, k) in enumerate(code):
        offsets = [labels[j] - i - 1 if isinstance(j, str) else j for j in (jt, jf)]
        assert all(0 <= o < 256 for o in offsets)  # a BPF jump is forward and fits a byte
        out += struct.pack("<HBBI", op, offsets[0], offsets[1], k)
    return out


def install(prog: bytes) -> None:
    """Load ``prog`` as this process's seccomp filter (``no_new_privs`` must be set).

    For the ``unshare`` fallback, whose worker has no ``bwrap`` to load it; the filter
    applies to the worker and everything it starts, and cannot be removed.
    """
    import ctypes  # only code that calls libc needs ctypes

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    fprog = SockFprog(len(prog) // 8, prog)
    pr_set_seccomp, seccomp_mode_filter = 22, 2
    if libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "loading the seccomp filter failed")
