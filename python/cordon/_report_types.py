"""Typed cordon.report/1 objects, generated from schemas/report.schema.json
by python/tools/gen_report.py: do not edit by hand."""
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from ._base import ReportBase, ReportObject


@dataclass
class Verdicts(ReportObject):
    containment: Optional[str] = None
    resources: Optional[str] = None
    task: Optional[str] = None


@dataclass
class Check(ReportObject):
    status: Optional[str] = None
    exit_code: Optional[int] = None
    wall_seconds: Optional[float] = None
    reason: Optional[str] = None  # optional
    workspace: Optional[str] = None  # optional
    workspace_reason: Optional[str] = None  # optional


@dataclass
class Limit(ReportObject):
    value: Optional[float] = None
    source: Optional[str] = None


@dataclass
class UsageNotifications(ReportObject):
    answered: Optional[int] = None
    throttled: Optional[int] = None
    held_seconds: Optional[float] = None


@dataclass
class Usage(ReportObject):
    wall_seconds: Optional[float] = None
    setup_seconds: Optional[float] = None  # optional
    cpu_user_seconds: Optional[float] = None
    cpu_system_seconds: Optional[float] = None
    peak_memory_bytes: Optional[int] = None
    ledger_peak_bytes: Optional[int] = None  # optional
    notifications: Optional[UsageNotifications] = None  # optional


@dataclass
class Denial(ReportObject):
    kind: Optional[str] = None
    target: Optional[str] = None
    count: Optional[int] = None
    phase: Optional[str] = None  # optional


@dataclass
class File(ReportObject):
    path: Optional[str] = None
    change: Optional[str] = None  # optional
    sha256: Optional[str] = None  # optional
    bytes: Optional[int] = None  # optional
    type: Optional[str] = None  # optional
    hash_skipped: Optional[str] = None  # optional


@dataclass
class Changes(ReportObject):
    """The run's change set in overlay and review workspace modes (README, Workspace modes); null in direct mode. outputs then lists the change set's entries, hashed from it (what was applied)."""
    state: Optional[str] = None
    dir: Optional[str] = None
    reason: Optional[str] = None
    refused: List[str] = field(default_factory=list)
    protected: List[str] = field(default_factory=list)
    conflicts: List[str] = field(default_factory=list)


@dataclass
class Fix(ReportObject):
    path: Optional[str] = None
    what: Optional[str] = None


@dataclass
class PrivilegeSweep(ReportObject):
    """present only when the sweep after the run may have missed a file (a bound of its full walk reached, a directory that could not be opened, a tree that changed under it); verdicts.containment is then "violations" (SECURITY.md, What a run leaves behind)"""
    complete: Optional[str] = None
    reason: Optional[str] = None
    entries_checked: Optional[int] = None


@dataclass
class ListCut(ReportObject):
    reason: Optional[str] = None
    files_omitted: Optional[int] = None
    files_unhashed: Optional[int] = None
    hashed_bytes: Optional[int] = None
    hash_budget_bytes: Optional[int] = None
    hash_budget_seconds: Optional[float] = None


@dataclass
class TruncatedDenials(ReportObject):
    targets_kept: Optional[int] = None
    count_omitted: Optional[int] = None


@dataclass
class Truncated(ReportObject):
    """present only when the report leaves something out: what, why, and how much"""
    inputs: Optional[ListCut] = None  # optional
    outputs: Optional[ListCut] = None  # optional
    denials: Optional[TruncatedDenials] = None  # optional


@dataclass
class Stream(ReportObject):
    bytes: Optional[int] = None
    sha256: Optional[str] = None
    hash_skipped: Optional[str] = None  # optional
    hashed_bytes: Optional[int] = None  # optional
    prefix_sha256: Optional[str] = None  # optional


@dataclass
class SecretExposure(ReportObject):
    name: Optional[str] = None
    path: Optional[str] = None
    where: Optional[str] = None  # optional


@dataclass
class SecretScan(ReportObject):
    """Present when the run had secrets: what the scan for secret_exposures read. complete is false when a budget (16 MiB per file, 64 MiB in all, 1000 entries) or a file that could not be opened safely cut it short."""
    files: Optional[int] = None
    bytes: Optional[int] = None
    complete: Optional[bool] = None


@dataclass
class Enforcement(ReportObject):
    user_ns: Optional[bool] = None
    pid_ns: Optional[bool] = None  # optional
    net_ns: Optional[bool] = None  # optional
    landlock_abi: Optional[int] = None
    seccomp: Optional[bool] = None
    seccomp_notify: Optional[bool] = None  # optional
    file_observer: Optional[bool] = None  # optional
    cgroup: Optional[str] = None
    no_new_privs: Optional[bool] = None  # optional
    idmapped_workspace: Optional[bool] = None  # optional
    landlock_missing: Optional[List[str]] = None  # optional
    workspace_ownership: Optional[str] = None  # optional
    workspace_ownership_reason: Optional[str] = None  # optional
    workspace_mode: Optional[str] = None  # optional
    workspace_mode_reason: Optional[str] = None  # optional
    degraded: List[str] = field(default_factory=list)  # optional
    sandbox_host_uid: Optional[int] = None  # optional


@dataclass
class Grant(ReportObject):
    kind: Optional[str] = None
    target: Optional[str] = None
    allowed: Optional[bool] = None
    rule: Optional[str] = None


@dataclass
class NetworkDns(ReportObject):
    """the run's own resolver (network.transparent, docs/network.md); only with it"""
    server: Optional[str] = None
    queries: Optional[int] = None
    answered: Optional[int] = None
    refused: Optional[int] = None
    names: Optional[int] = None
    names_max: Optional[int] = None
    over_limit: Optional[int] = None


@dataclass
class NetworkTransparent(ReportObject):
    """connects the supervisor made for the run and handed in (docs/network.md)"""
    connections: Optional[int] = None
    proxied: Optional[int] = None  # optional
    refused: Optional[int] = None
    failed: Optional[int] = None
    pending_max: Optional[int] = None
    over_limit: Optional[int] = None
    uncounted: Optional[int] = None  # optional


@dataclass
class NetworkInbound(ReportObject):
    """a pod's inbound relay (cordon-oci, run.cordon.inbound; docs/kubernetes.md); only with it"""
    ports: List[int] = field(default_factory=list)
    connections: Optional[int] = None
    max_connections: Optional[int] = None
    dropped: Optional[int] = None
    failed: Optional[int] = None
    full: Optional[int] = None


@dataclass
class NetworkEndpoint(ReportObject):
    target: Optional[str] = None
    connections: Optional[int] = None
    bytes_up: Optional[int] = None
    bytes_down: Optional[int] = None


@dataclass
class NetworkRequest(ReportObject):
    method: Optional[str] = None
    host: Optional[str] = None
    path: Optional[str] = None
    status: Optional[int] = None
    bytes_up: Optional[int] = None
    bytes_down: Optional[int] = None
    injected: List[str] = field(default_factory=list)


@dataclass
class NetworkInjected(ReportObject):
    secret: Optional[str] = None
    host: Optional[str] = None
    count: Optional[int] = None


@dataclass
class Network(ReportObject):
    proxy: Optional[str] = None
    dns: Optional[NetworkDns] = None  # optional
    transparent: Optional[NetworkTransparent] = None  # optional
    inbound: Optional[NetworkInbound] = None  # optional
    connections: Optional[int] = None
    denied: Optional[int] = None
    bytes_up: Optional[int] = None
    bytes_down: Optional[int] = None
    max_connections: Optional[int] = None  # optional
    over_limit: Optional[int] = None  # optional
    endpoints: List[NetworkEndpoint] = field(default_factory=list)
    requests: List[NetworkRequest] = field(default_factory=list)
    requests_omitted: Optional[int] = None
    injected: List[NetworkInjected] = field(default_factory=list)


@dataclass
class SessionPaused(ReportObject):
    start: Optional[float] = None
    end: Optional[float] = None


@dataclass
class SessionFile(ReportObject):
    op: Optional[str] = None
    path: Optional[str] = None
    bytes: Optional[int] = None  # optional
    sha256: Optional[str] = None  # optional
    error: Optional[str] = None


@dataclass
class Session(ReportObject):
    """cordon serve: the session this report ends (docs/api.md)"""
    id: Optional[str] = None
    end: Optional[str] = None
    warm: Optional[bool] = None  # optional
    pool_seconds: Optional[float] = None  # optional
    paused: List[SessionPaused] = field(default_factory=list)  # optional
    paused_seconds: Optional[float] = None  # optional
    paused_omitted: Optional[int] = None  # optional
    files: List[SessionFile] = field(default_factory=list)


@dataclass
class ExecResultDenial(ReportObject):
    kind: Optional[str] = None
    target: Optional[str] = None
    count: Optional[int] = None


@dataclass
class ExecResultUsage(ReportObject):
    cpu_user_seconds: Optional[float] = None
    cpu_sys_seconds: Optional[float] = None
    peak_memory_bytes: Optional[int] = None
    wall_seconds: Optional[float] = None
    cgroup_cpu_seconds: Optional[float] = None  # optional
    paused_seconds: Optional[float] = None  # optional
    start_to_exec_seconds: Optional[float] = None  # optional


@dataclass
class ExecResult(ReportObject):
    """cordon serve: one exec of a session, as its result event (docs/api.md)"""
    type: Optional[str] = None
    exec: Optional[str] = None
    argv: List[str] = field(default_factory=list)
    argv_omitted: Optional[int] = None  # optional
    status: Optional[str] = None
    exit_code: Optional[int] = None
    signal: Optional[str] = None
    error: Optional[str] = None  # optional
    denials: List[ExecResultDenial] = field(default_factory=list)
    denials_omitted: Optional[int] = None  # optional
    usage: Optional[ExecResultUsage] = None
    stdout: Optional[Stream] = None
    stderr: Optional[Stream] = None
    dropped_bytes: Optional[int] = None  # optional
    pty: Optional[str] = None  # optional
    input_dropped_bytes: Optional[int] = None  # optional


@dataclass
class Run(ReportObject):
    """cordon serve POST /v1/runs: the run's id and its output (redacted, as cordon run forwards it)"""
    id: Optional[str] = None
    stdout_b64: Optional[str] = None  # optional
    stderr_b64: Optional[str] = None  # optional


@dataclass
class Report(ReportBase):
    schema: Optional[str] = None
    status: Optional[str] = None
    reason: Optional[str] = None  # optional
    exit_code: Optional[int] = None
    signal: Optional[str] = None
    verdicts: Optional[Verdicts] = None
    check: Optional[Check] = None  # optional
    limits_hit: List[str] = field(default_factory=list)
    limits: Optional[Dict[str, Limit]] = None
    usage: Optional[Usage] = None
    denials: List[Denial] = field(default_factory=list)
    command: List[str] = field(default_factory=list)
    policy_sha256: Optional[str] = None
    rootfs: Optional[str] = None  # optional
    image_workspace: Optional[str] = None  # optional
    inputs: List[File] = field(default_factory=list)
    outputs: List[File] = field(default_factory=list)
    outputs_truncated: Optional[bool] = None  # optional
    changes: Optional[Changes] = None  # optional
    privilege_cleared: List[Fix] = field(default_factory=list)  # optional
    privilege_sweep: Optional[PrivilegeSweep] = None  # optional
    root_restored: List[Fix] = field(default_factory=list)  # optional
    truncated: Optional[Truncated] = None  # optional
    stdout: Optional[Stream] = None
    stderr: Optional[Stream] = None
    secrets: List[str] = field(default_factory=list)
    secret_exposures: List[SecretExposure] = field(default_factory=list)  # optional
    secret_scan: Optional[SecretScan] = None  # optional
    enforcement: Optional[Enforcement] = None
    ceiling_sha256: Optional[str] = None
    grants: List[Grant] = field(default_factory=list)  # optional
    unauthorized: List[str] = field(default_factory=list)  # optional
    network: Optional[Network] = None  # optional
    session: Optional[Session] = None  # optional
    execs: List[ExecResult] = field(default_factory=list)  # optional
    run: Optional[Run] = None  # optional


__all__ = ["Verdicts", "Check", "Limit", "UsageNotifications", "Usage", "Denial", "File", "Changes", "Fix", "PrivilegeSweep", "ListCut", "TruncatedDenials", "Truncated", "Stream", "SecretExposure", "SecretScan", "Enforcement", "Grant", "NetworkDns", "NetworkTransparent", "NetworkInbound", "NetworkEndpoint", "NetworkRequest", "NetworkInjected", "Network", "SessionPaused", "SessionFile", "Session", "ExecResultDenial", "ExecResultUsage", "ExecResult", "Run", "Report"]
