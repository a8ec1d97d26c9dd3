# deploy/kubernetes/ checked offline (issue 32 item 3): every manifest
# parsed and checked against the schemas of its objects carried in
# tests/k8s/schemas.json, the CRI snippets parsed, the objects agreeing
# (tests/k8s/check_manifests.py); then the checker itself, on copies with
# one fault each, names the fault. No cluster: a dry-run needs an API server.
. "$(dirname "$0")/../lib.sh"

PY=/usr/bin/python3
CHECK=("$PY" "$TOP/tests/k8s/check_manifests.py" "$TOP/tests/k8s/schemas.json")

k8s_skip_reason() {
	[ -x "$PY" ] || { echo "no /usr/bin/python3"; return; }
	"$PY" -c 'import yaml, tomllib' 2>/dev/null || echo "no python3-yaml (Debian) or Python < 3.11"
}

test_manifests_valid() {
	local why
	why=$(k8s_skip_reason)
	[ -z "$why" ] || { t_skip "$why"; return; }
	OUT=$("${CHECK[@]}" "$TOP/deploy/kubernetes" "$CORDON" 2>&1)
	expect_eq "$?" 0 "deploy/kubernetes checks clean: $OUT"
	expect_match "$OUT" 'RuntimeClass cordon' "the RuntimeClass is checked"
	expect_match "$OUT" 'SandboxTemplate cordon-python' "the SandboxTemplate is checked"
	expect_match "$OUT" 'SandboxWarmPool cordon-python-pool' "the warm pool is checked"
	expect_match "$OUT" 'containerd-cordon.toml.*crio-cordon.conf' "the CRI snippets are parsed"
	t_assert
}

# fault FILE PYTHON-EXPR-ON-s REGEX WHAT: a copy of deploy/kubernetes with
# FILE's text s changed, and the checker's message.
fault() {
	local d=$WS/k$RANDOM
	cp -r "$TOP/deploy/kubernetes" "$d"
	"$PY" -c 'import sys; p=sys.argv[1]; s=open(p).read(); s2=eval(sys.argv[2]); assert s2 != s, "no change"; open(p, "w").write(s2)' \
		"$d/$1" "$2" || { fail "$4: could not change $1"; return; }
	OUT=$("${CHECK[@]}" "$d" "$CORDON" 2>&1)
	expect_eq "$?" 1 "$4: the checker fails"
	expect_match "$OUT" "$3" "$4"
}

test_manifests_faults_named() {
	local why
	why=$(k8s_skip_reason)
	[ -z "$why" ] || { t_skip "$why"; return; }
	fault sandbox-template.yaml 's.replace("runtimeClassName:", "runtimeClassname:")' \
		'sandbox-template.yaml: document 1 \(SandboxTemplate\): spec.podTemplate.spec: unknown field runtimeClassname' "a misspelt field"
	fault sandbox-template.yaml 's.replace("runtimeClassName: cordon", "runtimeClassName: gvisor")' \
		'runtimeClassName gvisor is no RuntimeClass' "a RuntimeClass that is not there"
	fault sandbox-template.yaml 's.replace("replicas: 2", "replicas: -1")' \
		'document 2 \(SandboxWarmPool\): spec.replicas: -1 is below 0' "a negative pool"
	fault sandbox-template.yaml 's.replace("name: cordon-python\n", "name: other\n", 1)' \
		'sandboxTemplateRef cordon-python is no SandboxTemplate here' "a pool naming no template"
	fault runtimeclass.yaml 's.replace("handler: cordon", "handler: kata")' \
		'handler kata is no containerd runtime running cordon-oci' "a handler no CRI snippet defines"
	fault containerd-cordon.toml 's.replace("[plugins", "[[plugins", 1)' \
		'containerd-cordon.toml: ' "TOML that does not parse"
	fault runtimeclass.yaml 's.replace("apiVersion: node.k8s.io/v1", "apiVersion: node.k8s.io/v1beta1")' \
		'no schema for node.k8s.io/v1beta1 RuntimeClass' "an apiVersion not carried"
	# a policy annotation is a cordon policy
	fault sandbox-template.yaml 's.replace("      labels:\n", "      annotations:\n        run.cordon.policy: \"{\\\"netwrk\\\": {}}\"\n      labels:\n", 1)' \
		'annotation run.cordon.policy: .*netwrk' "a policy cordon refuses"
	t_assert
}

t_run test_manifests_valid
t_run test_manifests_faults_named
