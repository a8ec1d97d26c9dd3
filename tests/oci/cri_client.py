#!/usr/bin/python3
"""A small CRI client for tests/oci/cri.sh (Debian's python3-grpcio).

  cri_client.py image ROOTFS_TAR OUT_TAR NAME ARG...
      an OCI image archive of one uncompressed layer (the rootfs tarball),
      named NAME (for `ctr -n k8s.io image import`), its Cmd the ARGs.
  cri_client.py pod STUBS_DIR SOCKET HANDLER IMAGE CGROUP_PARENT LOGDIR [CGDIR]
      over the CRI v1 API (stubs generated from tests/oci/cri/api.proto
      into STUBS_DIR): RunPodSandbox (runtime handler HANDLER), two
      containers of IMAGE in it, started; ExecSync in each; then every stop
      and remove. Prints one JSON object of what it saw; exits 1 (with the
      error on stderr) where a call fails. CGDIR: a cgroup path whose
      entries, in any hierarchy, are listed while the pod runs ("cgdir").
  cri_client.py egress STUBS_DIR SOCKET HANDLER IMAGE CGROUP_PARENT LOGDIR WWW HOST_PORT
      a pod whose sandbox carries the annotation run.cordon.policy (the
      runtime's pod_annotations pass it on), allowing 127.0.0.1:8080 and
      127.0.0.1:HOST_PORT: servers (busybox httpd of WWW) on 8080 and 8081
      in the pod's network namespace (found in the sandbox's verbose
      status), two containers exec'd through the proxy, the pod's address
      :7777 (run.cordon.inbound) fetched from the pod's network namespace,
      a third container whose own policy differs (its CreateContainer
      error); then every stop and remove. Prints one JSON object of what
      it saw.
  cri_client.py secrets STUBS_DIR SOCKET HANDLER IMAGE CGROUP_PARENT LOGDIR TLSDIR PORT
      a pod whose policy allows GET only to 127.0.0.1:PORT (HTTPS, its
      upstream_ca TLSDIR/ca.pem) and injects TOKEN (a variable) and API (a
      file) there: tests/tlsserver.py (TLSDIR's srv.pem, srv.key, www/,
      requests logged in TLSDIR/log) on PORT in the pod's network
      namespace; two containers with the host's /usr bound read-only
      (curl): their placeholders, a GET with the token and a POST through
      the sandbox's proxy, the CA bundle; then every stop and remove.
"""
import subprocess
import hashlib
import io
import json
import os
import sys
import tarfile
import time


def blob(tf, data):
    d = hashlib.sha256(data).hexdigest()
    ti = tarfile.TarInfo("blobs/sha256/" + d)
    ti.size = len(data)
    tf.addfile(ti, io.BytesIO(data))
    return "sha256:" + d, len(data)


def image(rootfs, out, name, args):
    layer = open(rootfs, "rb").read()
    diff = "sha256:" + hashlib.sha256(layer).hexdigest()
    cfg = json.dumps({"architecture": "amd64", "os": "linux",
                      "config": {"Cmd": args, "Env": ["PATH=/bin"], "WorkingDir": "/"},
                      "rootfs": {"type": "layers", "diff_ids": [diff]}}).encode()
    with tarfile.open(out, "w") as tf:
        ld, ls = blob(tf, layer)
        cd, cs = blob(tf, cfg)
        man = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                          "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cd, "size": cs},
                          "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": ld, "size": ls}]}).encode()
        md, ms = blob(tf, man)
        idx = json.dumps({"schemaVersion": 2, "manifests": [
            {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": md, "size": ms,
             "platform": {"architecture": "amd64", "os": "linux"},
             "annotations": {"io.containerd.image.name": name, "org.opencontainers.image.ref.name": name}}]}).encode()
        for n, d in (("oci-layout", b'{"imageLayoutVersion": "1.0.0"}'), ("index.json", idx)):
            ti = tarfile.TarInfo(n)
            ti.size = len(d)
            tf.addfile(ti, io.BytesIO(d))


def cg_entries(cgdir):
    out = set()
    for line in open("/proc/self/mountinfo"):
        f = line.split()
        fstype = f[f.index("-") + 1]
        if fstype in ("cgroup", "cgroup2"):
            try:
                out |= set(os.listdir(f[4] + cgdir))
            except OSError:
                pass
    return sorted(out)


def pod(stubs, sock, handler, img, cgparent, logdir, cgdir=None):
    sys.path.insert(0, stubs)
    import grpc
    import api_pb2 as pb
    import api_pb2_grpc as pbg

    ch = grpc.insecure_channel("unix://" + sock)
    rt = pbg.RuntimeServiceStub(ch)
    im = pbg.ImageServiceStub(ch)
    T = 120  # a hang guard per call, not a measurement
    seen = {"version": rt.Version(pb.VersionRequest(version="v1"), timeout=T).runtime_api_version}
    # The CRI plugin learns of images imported by ctr from containerd's events.
    for _ in range(300):
        if im.ImageStatus(pb.ImageStatusRequest(image=pb.ImageSpec(image=img)), timeout=T).image.id:
            break
        time.sleep(0.1)
    else:
        raise SystemExit("the CRI plugin does not list the image " + img)
    meta = pb.PodSandboxMetadata(name="cordon-pod", uid="cordon-pod-uid-1", namespace="default", attempt=0)
    pcfg = pb.PodSandboxConfig(
        metadata=meta, hostname="cordon-pod", log_directory=logdir,
        labels={"app": "cordon-cri-test"},
        linux=pb.LinuxPodSandboxConfig(cgroup_parent=cgparent))
    sid = rt.RunPodSandbox(pb.RunPodSandboxRequest(config=pcfg, runtime_handler=handler), timeout=T).pod_sandbox_id
    seen["sandbox"] = sid
    st = rt.PodSandboxStatus(pb.PodSandboxStatusRequest(pod_sandbox_id=sid), timeout=T).status
    seen["sandbox_state"] = pb.PodSandboxState.Name(st.state)
    seen["sandbox_runtime_handler"] = st.runtime_handler

    def create(name, argv):
        c = pb.ContainerConfig(metadata=pb.ContainerMetadata(name=name, attempt=0),
                               image=pb.ImageSpec(image=img), command=argv, log_path=name + ".log",
                               linux=pb.LinuxContainerConfig())
        cid = rt.CreateContainer(pb.CreateContainerRequest(pod_sandbox_id=sid, config=c, sandbox_config=pcfg),
                                 timeout=T).container_id
        rt.StartContainer(pb.StartContainerRequest(container_id=cid), timeout=T)
        return cid

    def ex(cid, argv):
        r = rt.ExecSync(pb.ExecSyncRequest(container_id=cid, cmd=argv, timeout=60), timeout=T)
        return {"rc": r.exit_code, "out": r.stdout.decode(errors="replace"), "err": r.stderr.decode(errors="replace")}

    # a: an HTTP server on the pod's loopback; b: idle.
    a = create("a", ["/bin/sh", "-c", "mkdir -p /tmp/www && echo served-by-a >/tmp/www/index.html && "
                     "exec httpd -f -p 127.0.0.1:7777 -h /tmp/www"])
    b = create("b", ["/bin/sleep", "600"])
    seen["containers"] = [a, b]
    seen["states"] = [pb.ContainerState.Name(rt.ContainerStatus(pb.ContainerStatusRequest(container_id=c),
                                                                 timeout=T).status.state) for c in (a, b)]
    for k, c in (("a", a), ("b", b)):
        seen["uid_map_" + k] = ex(c, ["/bin/cat", "/proc/self/uid_map"])
        seen["netns_" + k] = ex(c, ["/bin/readlink", "/proc/self/ns/net"])
        seen["pidns_" + k] = ex(c, ["/bin/readlink", "/proc/self/ns/pid"])
    # b reaches a's server on 127.0.0.1: one network namespace (the pod's).
    for _ in range(100):
        seen["fetch"] = ex(b, ["/bin/wget", "-q", "-O-", "http://127.0.0.1:7777/"])
        if seen["fetch"]["rc"] == 0:
            break
        time.sleep(0.1)
    seen["exec_status"] = ex(a, ["/bin/sh", "-c", "exit 3"])["rc"]
    if cgdir:
        seen["cgdir"] = cg_entries(cgdir)
    for c in (a, b):
        rt.StopContainer(pb.StopContainerRequest(container_id=c, timeout=10), timeout=T)
    seen["stopped"] = [pb.ContainerState.Name(rt.ContainerStatus(pb.ContainerStatusRequest(container_id=c),
                                                                  timeout=T).status.state) for c in (a, b)]
    for c in (a, b):
        rt.RemoveContainer(pb.RemoveContainerRequest(container_id=c), timeout=T)
    rt.StopPodSandbox(pb.StopPodSandboxRequest(pod_sandbox_id=sid), timeout=T)
    rt.RemovePodSandbox(pb.RemovePodSandboxRequest(pod_sandbox_id=sid), timeout=T)
    seen["left"] = {"sandboxes": len(rt.ListPodSandbox(pb.ListPodSandboxRequest(), timeout=T).items),
                    "containers": len(rt.ListContainers(pb.ListContainersRequest(), timeout=T).containers)}
    print(json.dumps(seen))


def connect(stubs, sock, img):
    sys.path.insert(0, stubs)
    import grpc
    import api_pb2 as pb
    import api_pb2_grpc as pbg

    ch = grpc.insecure_channel("unix://" + sock)
    rt = pbg.RuntimeServiceStub(ch)
    im = pbg.ImageServiceStub(ch)
    for _ in range(300):
        if im.ImageStatus(pb.ImageStatusRequest(image=pb.ImageSpec(image=img)), timeout=120).image.id:
            return grpc, pb, rt
        time.sleep(0.1)
    raise SystemExit("the CRI plugin does not list the image " + img)


def egress(stubs, sock, handler, img, cgparent, logdir, www, host_port):
    grpc, pb, rt = connect(stubs, sock, img)
    T = 120  # a hang guard per call, not a measurement
    policy = json.dumps({"network": {"allow": ["127.0.0.1:8080", "127.0.0.1:" + host_port],
                                     "loopback_ports": [7777]}})
    seen = {}
    meta = pb.PodSandboxMetadata(name="cordon-egress", uid="cordon-egress-uid-1", namespace="default", attempt=0)
    pcfg = pb.PodSandboxConfig(
        metadata=meta, hostname="cordon-egress", log_directory=logdir,
        annotations={"run.cordon.policy": policy, "run.cordon.inbound": "7777"},
        linux=pb.LinuxPodSandboxConfig(cgroup_parent=cgparent))
    sid = rt.RunPodSandbox(pb.RunPodSandboxRequest(config=pcfg, runtime_handler=handler), timeout=T).pod_sandbox_id
    seen["sandbox"] = sid
    st = rt.PodSandboxStatus(pb.PodSandboxStatusRequest(pod_sandbox_id=sid, verbose=True), timeout=T)
    seen["sandbox_state"] = pb.PodSandboxState.Name(st.status.state)
    info = json.loads(st.info["info"])
    netns = [n.get("path", "") for n in info["runtimeSpec"]["linux"]["namespaces"] if n["type"] == "network"][0]
    seen["pod_netns"] = "net:[%d]" % os.stat(netns).st_ino
    # the pod's own servers, on its loopback (what the proxy reaches from the pod's netns)
    srv = [subprocess.Popen(["nsenter", "--net=" + netns, "busybox", "httpd", "-f", "-p", "127.0.0.1:%d" % port,
                             "-h", www + "/" + str(port)]) for port in (8080, 8081)]
    try:
        def create(name, argv, annotations=None):
            c = pb.ContainerConfig(metadata=pb.ContainerMetadata(name=name, attempt=0),
                                   image=pb.ImageSpec(image=img), command=argv, log_path=name + ".log",
                                   annotations=annotations or {}, linux=pb.LinuxContainerConfig())
            cid = rt.CreateContainer(pb.CreateContainerRequest(pod_sandbox_id=sid, config=c, sandbox_config=pcfg),
                                     timeout=T).container_id
            rt.StartContainer(pb.StartContainerRequest(container_id=cid), timeout=T)
            return cid

        def ex(cid, argv):
            r = rt.ExecSync(pb.ExecSyncRequest(container_id=cid, cmd=argv, timeout=60), timeout=T)
            return {"rc": r.exit_code, "out": r.stdout.decode(errors="replace"),
                    "err": r.stderr.decode(errors="replace")}

        a = create("a", ["/bin/sh", "-c", "env >/tmp/env && mkdir -p /tmp/www && "
                         "echo served-by-a >/tmp/www/index.html && exec httpd -f -p 127.0.0.1:7777 -h /tmp/www"])
        b = create("b", ["/bin/sh", "-c", "env >/tmp/env && exec sleep 600"])
        seen["containers"] = [a, b]
        px = "http_proxy=http://127.0.0.1:3128"
        for k, c in (("a", a), ("b", b)):
            seen["netns_" + k] = ex(c, ["/bin/readlink", "/proc/self/ns/net"])
            # the proxy's variables in the container's own process (its env)
            for _ in range(100):
                seen["env_" + k] = ex(c, ["/bin/grep", "^http_proxy=", "/tmp/env"])
                if seen["env_" + k]["rc"] == 0:
                    break
                time.sleep(0.1)
            for _ in range(100):  # the pod's servers starting
                seen["allowed_" + k] = ex(c, ["/bin/env", px, "/bin/wget", "-q", "-O-", "http://127.0.0.1:8080/"])
                if seen["allowed_" + k]["rc"] == 0:
                    break
                time.sleep(0.1)
            seen["refused_" + k] = ex(c, ["/bin/env", px, "/bin/wget", "-q", "-O-", "http://127.0.0.1:8081/"])
            seen["host_" + k] = ex(c, ["/bin/env", px, "/bin/wget", "-q", "-O-", "http://127.0.0.1:%s/" % host_port])
            seen["direct_" + k] = ex(c, ["/bin/wget", "-q", "-O-", "http://127.0.0.1:8080/"])
        for _ in range(100):
            seen["fetch"] = ex(b, ["/bin/wget", "-q", "-O-", "http://127.0.0.1:7777/"])
            if seen["fetch"]["rc"] == 0:
                break
            time.sleep(0.1)
        # inbound (run.cordon.inbound 7777): the pod's address, from the
        # pod's network namespace, as the kubelet's probe or a Service comes
        ip = st.status.network.ip
        seen["pod_ip"] = ip
        r = subprocess.run(["nsenter", "--net=" + netns, "busybox", "wget", "-q", "-O-", "http://%s:7777/" % ip],
                           capture_output=True, timeout=T)
        seen["inbound"] = {"rc": r.returncode, "out": r.stdout.decode(errors="replace"),
                           "err": r.stderr.decode(errors="replace")}
        # and from inside, the relay's listener (the pod's address) is not reached
        seen["inbound_inside"] = ex(b, ["/bin/wget", "-q", "-Y", "off", "-O-", "http://%s:7777/" % ip])
        # a container whose own policy is not the pod's
        try:
            create("c", ["/bin/sleep", "600"], {"run.cordon.policy": '{"network": {"allow": ["127.0.0.1:8081"]}}'})
            seen["differs"] = "created"
        except grpc.RpcError as e:
            seen["differs"] = e.details()
        for c in (a, b):
            rt.StopContainer(pb.StopContainerRequest(container_id=c, timeout=10), timeout=T)
            rt.RemoveContainer(pb.RemoveContainerRequest(container_id=c), timeout=T)
        for c in rt.ListContainers(pb.ListContainersRequest(), timeout=T).containers:
            rt.RemoveContainer(pb.RemoveContainerRequest(container_id=c.id), timeout=T)
    finally:
        for p in srv:
            p.kill()
            p.wait()
    rt.StopPodSandbox(pb.StopPodSandboxRequest(pod_sandbox_id=sid), timeout=T)
    rt.RemovePodSandbox(pb.RemovePodSandboxRequest(pod_sandbox_id=sid), timeout=T)
    seen["left"] = {"sandboxes": len(rt.ListPodSandbox(pb.ListPodSandboxRequest(), timeout=T).items),
                    "containers": len(rt.ListContainers(pb.ListContainersRequest(), timeout=T).containers)}
    print(json.dumps(seen))


def secrets(stubs, sock, handler, img, cgparent, logdir, tls, port):
    grpc, pb, rt = connect(stubs, sock, img)
    T = 120  # a hang guard per call, not a measurement
    hp = "127.0.0.1:" + port
    inj = {"hosts": [hp]}
    policy = json.dumps({"network": {"allow": [{"host": hp, "methods": ["GET"]}], "upstream_ca": tls + "/ca.pem"},
                         "secrets": {"TOKEN": {"env": "HOST_TOKEN", "inject": dict(inj, placeholder="ghp_")},
                                     "API": {"env": "HOST_API", "mount": "/run/secrets/API",
                                             "inject": dict(inj, placeholder="api_")}}})
    seen = {}
    meta = pb.PodSandboxMetadata(name="cordon-secrets", uid="cordon-secrets-uid-1", namespace="default", attempt=0)
    pcfg = pb.PodSandboxConfig(
        metadata=meta, hostname="cordon-secrets", log_directory=logdir, annotations={"run.cordon.policy": policy},
        linux=pb.LinuxPodSandboxConfig(cgroup_parent=cgparent))
    sid = rt.RunPodSandbox(pb.RunPodSandboxRequest(config=pcfg, runtime_handler=handler), timeout=T).pod_sandbox_id
    seen["sandbox"] = sid
    st = rt.PodSandboxStatus(pb.PodSandboxStatusRequest(pod_sandbox_id=sid, verbose=True), timeout=T)
    seen["sandbox_state"] = pb.PodSandboxState.Name(st.status.state)
    info = json.loads(st.info["info"])
    netns = [n.get("path", "") for n in info["runtimeSpec"]["linux"]["namespaces"] if n["type"] == "network"][0]
    pf = tls + "/port"
    srv = subprocess.Popen(["nsenter", "--net=" + netns, "/usr/bin/python3",
                            os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tlsserver.py"),
                            pf, tls + "/log", tls + "/srv.pem", tls + "/srv.key", tls + "/www"],
                           env=dict(os.environ, TLSSERVER_PORT=port))
    try:
        for _ in range(600):
            if os.path.exists(pf) or srv.poll() is not None:
                break
            time.sleep(0.1)

        def create(name, argv):
            c = pb.ContainerConfig(metadata=pb.ContainerMetadata(name=name, attempt=0),
                                   image=pb.ImageSpec(image=img), command=argv, log_path=name + ".log",
                                   mounts=[pb.Mount(container_path="/usr", host_path="/usr", readonly=True)],
                                   linux=pb.LinuxContainerConfig())
            cid = rt.CreateContainer(pb.CreateContainerRequest(pod_sandbox_id=sid, config=c, sandbox_config=pcfg),
                                     timeout=T).container_id
            rt.StartContainer(pb.StartContainerRequest(container_id=cid), timeout=T)
            return cid

        def ex(cid, script):
            # an exec'd process has the config's env (the CRI's), not what
            # cordon-oci gave the container's process: take that from /tmp/env
            argv = ["/bin/sh", "-c", "export $(grep -E '^(TOKEN|HTTPS_PROXY|CURL_CA_BUNDLE)=' /tmp/env); " + script]
            r = rt.ExecSync(pb.ExecSyncRequest(container_id=cid, cmd=argv, timeout=60), timeout=T)
            return {"rc": r.exit_code, "out": r.stdout.decode(errors="replace"),
                    "err": r.stderr.decode(errors="replace")}

        a = create("a", ["/bin/sh", "-c", "env >/tmp/env.t && mv /tmp/env.t /tmp/env && exec sleep 600"])
        b = create("b", ["/bin/sh", "-c", "env >/tmp/env.t && mv /tmp/env.t /tmp/env && exec sleep 600"])
        for k, c in (("a", a), ("b", b)):
            for _ in range(100):
                seen["token_" + k] = ex(c, 'echo "$TOKEN"')
                if seen["token_" + k]["out"].strip():
                    break
                time.sleep(0.1)
            seen["api_" + k] = ex(c, "cat /run/secrets/API")
            seen["ca_" + k] = ex(c, 'echo "$CURL_CA_BUNDLE"; grep -c "BEGIN CERTIFICATE" /run/cordon-ca/ca.pem')
        u = "https://%s/pub/a.txt" % hp
        seen["get"] = ex(a, '/usr/bin/curl -sS -D - -H "Authorization: Bearer $TOKEN" ' + u)
        seen["post"] = ex(b, "/usr/bin/curl -s -o /dev/null -w '%{http_code}' -X POST -d x " + u)
        for c in (a, b):
            rt.StopContainer(pb.StopContainerRequest(container_id=c, timeout=10), timeout=T)
            rt.RemoveContainer(pb.RemoveContainerRequest(container_id=c), timeout=T)
    finally:
        srv.kill()
        srv.wait()
    rt.StopPodSandbox(pb.StopPodSandboxRequest(pod_sandbox_id=sid), timeout=T)
    rt.RemovePodSandbox(pb.RemovePodSandboxRequest(pod_sandbox_id=sid), timeout=T)
    seen["left"] = {"sandboxes": len(rt.ListPodSandbox(pb.ListPodSandboxRequest(), timeout=T).items),
                    "containers": len(rt.ListContainers(pb.ListContainersRequest(), timeout=T).containers)}
    print(json.dumps(seen))


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "image":
        image(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    elif len(sys.argv) in (8, 9) and sys.argv[1] == "pod":
        try:
            pod(*sys.argv[2:])
        except Exception as e:  # a grpc.RpcError names the call's status and details
            print("cri_client: %s" % (e,), file=sys.stderr)
            sys.exit(1)
    elif len(sys.argv) == 10 and sys.argv[1] == "egress":
        try:
            egress(*sys.argv[2:])
        except Exception as e:
            print("cri_client: %s" % (e,), file=sys.stderr)
            sys.exit(1)
    elif len(sys.argv) == 10 and sys.argv[1] == "secrets":
        try:
            secrets(*sys.argv[2:])
        except Exception as e:
            print("cri_client: %s" % (e,), file=sys.stderr)
            sys.exit(1)
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


main()
