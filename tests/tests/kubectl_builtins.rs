//! Every kubectl release on the machine (the default `kubectl`, and `kubectl.1.27` to
//! `kubectl.1.33` beside it) against a real kapi serving Kubernetes' built-in kinds.
//!
//! One scenario, run by each release against its own server: a small web application
//! (`tests/manifests/`: Namespace, ConfigMap, Secret, Deployment, Service, Ingress, Job,
//! CronJob, ServiceAccount, Role, RoleBinding) applied with `apply -f` on the folder,
//! applied again unchanged and after an edit (client-side apply: the last-applied
//! annotation and a strategic merge patch), then read back with every `get` output
//! format, `get all`, `describe`, changed with `label`, `annotate`, the three `patch`
//! types, `scale`, `set image`, `edit` (EDITOR is a sed script), `replace` and `diff`,
//! watched with `get -w` and `wait`, and deleted by file, by label and with `--all`;
//! discovery with `api-resources`, `api-versions` and `explain`.
//!
//! Expected outputs are what kubectl prints against kube-apiserver 1.33 with no
//! controllers running (so a Deployment stays `0/3` ready, a Job `Running`, and no
//! `kube-root-ca.crt` or `default` ServiceAccount appears), except that a pod template's
//! metadata has no `creationTimestamp: null`, as from kube-apiserver 1.34 on. Every command's output is
//! compared, after [`normalize`] hides what varies from run to run (ages, timestamps,
//! uids, resourceVersions, allocated cluster IPs). A step's failure is recorded and
//! the scenario goes on, so that one run reports every difference; each release's test
//! fails at the end with all of them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::Duration;

// The releases tested, beside the default `kubectl` (`None`).
use kapi_tests::KUBECTL_RELEASES as RELEASES;
use kapi_tests::{
    Backend, KUBECTL_TIMEOUT, Kapi, LineReader, kubectl_versions, wait_output_bounded,
};
use serde_json::{Value, json};

/// The releases run one after the other (each starts a server and some fifty kubectl
/// processes; the machine has few cores).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// How long a background kubectl (`get -w`, `wait`) may take to print an expected line.
const LINE_WAIT: Duration = Duration::from_secs(20);

fn manifests() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests")
}

fn manifest(name: &str) -> String {
    let path = manifests().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

// ---------------------------------------------------------------------------------------
// Normalisation of what varies between runs.

/// `5s`, `2m3s`, `3h`, `4d`, `2y10d`: a kubectl age.
fn is_age(word: &str) -> bool {
    let mut rest = word;
    let mut parts = 0;
    while !rest.is_empty() {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        if digits == 0 {
            return false;
        }
        rest = &rest[digits..];
        match rest.chars().next() {
            Some('s' | 'm' | 'h' | 'd' | 'y') => rest = &rest[1..],
            _ => return false,
        }
        parts += 1;
    }
    (1..=2).contains(&parts)
}

/// `2026-11-30T13:05:46Z`.
fn is_timestamp(word: &str) -> bool {
    let b = word.as_bytes();
    b.len() == 20
        && b[4] == b'-'
        && b[10] == b'T'
        && b[19] == b'Z'
        && b[..4].iter().all(u8::is_ascii_digit)
}

/// An IPv4 address (an allocated cluster IP).
fn is_ipv4(word: &str) -> bool {
    let parts: Vec<&str> = word.split('.').collect();
    parts.len() == 4
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 3 && p.chars().all(|c| c.is_ascii_digit()))
}

/// A uid.
fn is_uuid(word: &str) -> bool {
    word.len() == 36
        && word.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

fn normalize_word(word: &str) -> String {
    let bare = word.trim_matches('"');
    if is_age(bare) {
        "<age>".into()
    } else if is_timestamp(bare) {
        "<time>".into()
    } else if is_ipv4(bare) {
        "<ip>".into()
    } else if is_uuid(bare) {
        "<uid>".into()
    } else {
        word.into()
    }
}

/// What kubectl printed with the volatile parts replaced: ages, timestamps, uids, IPv4
/// addresses and resourceVersions become placeholders, column padding (two or more
/// spaces inside a line) becomes two spaces, trailing blanks go. Indentation is kept.
fn normalize(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let line = line.trim_end();
        let indent = line.len() - line.trim_start_matches(' ').len();
        let body = &line[indent..];
        let body = if let Some(rest) = body.strip_prefix("resourceVersion: ") {
            let _ = rest;
            "resourceVersion: <rv>".to_string()
        } else {
            body.split("  ")
                .map(str::trim)
                .filter(|cell| !cell.is_empty())
                .map(|cell| {
                    cell.split(' ')
                        .map(normalize_word)
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect::<Vec<_>>()
                .join("  ")
        };
        out.push_str(&line[..indent]);
        out.push_str(&body);
        out.push('\n');
    }
    out
}

/// A line with its whitespace collapsed, for `describe`'s aligned fields.
fn squash(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

// ---------------------------------------------------------------------------------------
// One release's run.

struct Run<'a> {
    kapi: &'a Kapi,
    version: Option<&'a str>,
    failures: Vec<String>,
    scratch: PathBuf,
}

impl<'a> Run<'a> {
    fn name(&self) -> String {
        match self.version {
            None => "kubectl".into(),
            Some(v) => format!("kubectl.{v}"),
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = self.kapi.kubectl_command(self.version);
        cmd.args(args)
            .env_remove("KUBE_EDITOR")
            .env_remove("KUBECTL_EXTERNAL_DIFF");
        cmd
    }

    /// Runs kubectl with `args`, `stdin` and extra environment variables.
    fn exec(&self, args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Output {
        let mut cmd = self.command(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        if stdin.is_some() {
            cmd.stdin(std::process::Stdio::piped());
        }
        let what = format!("{} {}", self.name(), args.join(" "));
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("{what}: {e}"));
        if let Some(input) = stdin {
            use std::io::Write;
            let mut pipe = child.stdin.take().expect("piped");
            pipe.write_all(input.as_bytes())
                .expect("writing kubectl's stdin");
        }
        wait_output_bounded(child, KUBECTL_TIMEOUT, &what)
    }

    fn fail(&mut self, what: &str, detail: String) {
        let msg = format!("[{}] {what}\n{detail}", self.name());
        eprintln!("FAILED {msg}\n");
        self.failures.push(msg);
    }

    fn check(&mut self, ok: bool, what: &str, detail: impl FnOnce() -> String) {
        if !ok {
            self.fail(what, detail());
        }
    }

    /// Runs a command that must succeed; records a failure otherwise. Returns stdout.
    fn run(&mut self, args: &[&str], stdin: Option<&str>) -> String {
        let out = self.exec(args, stdin, &[]);
        self.succeeded(args, &out)
    }

    fn succeeded(&mut self, args: &[&str], out: &Output) -> String {
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr).to_string();
            self.fail(
                &format!("kubectl {}", args.join(" ")),
                format!(
                    "exited with {}\n--- stdout\n{stdout}--- stderr\n{stderr}",
                    out.status
                ),
            );
        }
        stdout
    }

    /// Runs a command that must succeed and print `expected` (both normalised).
    fn expect(&mut self, args: &[&str], stdin: Option<&str>, expected: &str) -> String {
        let out = self.exec(args, stdin, &[]);
        let stdout = self.succeeded(args, &out);
        if out.status.success() {
            self.compare(&format!("kubectl {}", args.join(" ")), expected, &stdout);
        }
        stdout
    }

    /// Compares normalised outputs; records the difference.
    fn compare(&mut self, what: &str, expected: &str, actual: &str) {
        let (e, a) = (normalize(expected), normalize(actual));
        if e != a {
            let diff = line_diff(&e, &a);
            self.fail(
                what,
                format!("--- expected\n{expected}--- actual\n{actual}--- differing lines (normalised; - expected, + actual)\n{diff}"),
            );
        }
    }

    /// Runs a command that must succeed and whose output holds each of `lines` (compared
    /// with whitespace collapsed).
    fn expect_lines(&mut self, args: &[&str], lines: &[&str]) -> String {
        let stdout = self.run(args, None);
        let have: Vec<String> = stdout.lines().map(squash).collect();
        let missing: Vec<&str> = lines
            .iter()
            .copied()
            .filter(|l| !have.contains(&squash(l)))
            .collect();
        if !missing.is_empty() {
            self.fail(
                &format!("kubectl {}", args.join(" ")),
                format!(
                    "missing lines:\n{}\n--- actual\n{stdout}",
                    missing.join("\n")
                ),
            );
        }
        stdout
    }

    /// Runs a command that must fail with `expected` on stderr (normalised).
    fn expect_error(&mut self, args: &[&str], expected: &str) {
        let out = self.exec(args, None, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        if out.status.success() {
            self.fail(
                &format!("kubectl {}", args.join(" ")),
                format!(
                    "succeeded, expected an error\n--- stdout\n{}",
                    String::from_utf8_lossy(&out.stdout)
                ),
            );
        } else {
            self.compare(
                &format!("kubectl {} (stderr)", args.join(" ")),
                expected,
                &stderr,
            );
        }
    }

    /// Runs a command that must succeed, print nothing on stdout and `expected` on stderr
    /// (`No resources found ...`).
    fn expect_nothing(&mut self, args: &[&str], expected: &str) {
        let out = self.exec(args, None, &[]);
        let stdout = self.succeeded(args, &out);
        if out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr).to_string();
            self.compare(
                &format!("kubectl {} (stdout, stderr)", args.join(" ")),
                &format!("--- stdout\n--- stderr\n{expected}"),
                &format!("--- stdout\n{stdout}--- stderr\n{stderr}"),
            );
        }
    }

    /// A kubectl in the background, its stdout (and stderr when `stderr`) read by lines.
    fn spawn(&self, args: &[&str], stderr: bool) -> LineReader {
        let child = self
            .command(args)
            .spawn()
            .unwrap_or_else(|e| panic!("{} {args:?}: {e}", self.name()));
        if stderr {
            LineReader::with_stderr(child)
        } else {
            LineReader::new(child)
        }
    }

    /// Waits for a background kubectl's line; records a failure (with what it printed)
    /// instead of panicking.
    fn wait_line(
        &mut self,
        reader: &mut LineReader,
        what: &str,
        matches: impl Fn(&str) -> bool + std::panic::RefUnwindSafe,
    ) -> Option<String> {
        let got = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            reader.wait_for(LINE_WAIT, &matches)
        }));
        match got {
            Ok(line) => Some(line),
            Err(e) => {
                let msg = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                self.fail(what, msg);
                None
            }
        }
    }

    fn write(&self, name: &str, text: &str) -> String {
        let path = self.scratch.join(name);
        std::fs::write(&path, text).expect("writing a scratch file");
        path.display().to_string()
    }
}

/// The lines of `a` and `b` that differ, in order (a short hint under the full texts).
fn line_diff(a: &str, b: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let mut out = String::new();
    for l in &a {
        if !b.contains(l) {
            out.push_str(&format!("- {l}\n"));
        }
    }
    for l in &b {
        if !a.contains(l) {
            out.push_str(&format!("+ {l}\n"));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Expected outputs.

const CREATED: &str = "\
namespace/web created
configmap/web-config created
secret/web-credentials created
deployment.apps/web created
service/web created
ingress.networking.k8s.io/web created
job.batch/migrate created
cronjob.batch/report created
serviceaccount/web created
role.rbac.authorization.k8s.io/web-reader created
rolebinding.rbac.authorization.k8s.io/web-reader created
";

/// The Deployment's last-applied configuration after the first `apply` (kubectl writes
/// it; the server must keep it byte for byte).
const LAST_APPLIED_FIRST: &str = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"labels":{"app":"web","tier":"frontend"},"name":"web","namespace":"web"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web","tier":"frontend"}},"spec":{"containers":[{"env":[{"name":"DB_PASSWORD","valueFrom":{"secretKeyRef":{"key":"password","name":"web-credentials"}}}],"envFrom":[{"configMapRef":{"name":"web-config"}}],"image":"nginx:1.27","name":"nginx","ports":[{"containerPort":8080,"name":"http"}],"resources":{"limits":{"memory":"128Mi"},"requests":{"cpu":"100m","memory":"64Mi"}}}],"serviceAccountName":"web"}}}}
"#;

/// The manifests after an edit: three replicas and no `tier` label on the Deployment,
/// another log level, a second Service port, another CronJob schedule.
fn edited(name: &str) -> String {
    let text = manifest(name);
    match name {
        "app.yaml" => {
            let text = text
                .replace(
                    "    tier: frontend\nspec:\n  replicas: 2\n",
                    "spec:\n  replicas: 3\n",
                )
                .replace("LOG_LEVEL: info", "LOG_LEVEL: debug")
                .replace(
                    "      targetPort: http\n",
                    "      targetPort: http\n    - name: https\n      port: 443\n      targetPort: 8443\n",
                );
            assert!(text.contains("replicas: 3") && text.contains("port: 443"));
            text
        }
        "batch.yaml" => text.replace("\"0 3 * * *\"", "\"0 4 * * *\""),
        _ => text,
    }
}

const APPLIED_EDIT: &str = "\
namespace/web unchanged
configmap/web-config configured
secret/web-credentials configured
deployment.apps/web configured
service/web configured
ingress.networking.k8s.io/web unchanged
job.batch/migrate unchanged
cronjob.batch/report configured
serviceaccount/web unchanged
role.rbac.authorization.k8s.io/web-reader unchanged
rolebinding.rbac.authorization.k8s.io/web-reader unchanged
";

/// `get deployment web -o yaml` after the edited apply: kube-apiserver's defaults for
/// the Deployment and its pod template, no status written by any controller.
const DEPLOYMENT_YAML: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"labels":{"app":"web"},"name":"web","namespace":"web"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web","tier":"frontend"}},"spec":{"containers":[{"env":[{"name":"DB_PASSWORD","valueFrom":{"secretKeyRef":{"key":"password","name":"web-credentials"}}}],"envFrom":[{"configMapRef":{"name":"web-config"}}],"image":"nginx:1.27","name":"nginx","ports":[{"containerPort":8080,"name":"http"}],"resources":{"limits":{"memory":"128Mi"},"requests":{"cpu":"100m","memory":"64Mi"}}}],"serviceAccountName":"web"}}}}
  creationTimestamp: "2026-11-30T13:05:46Z"
  generation: 2
  labels:
    app: web
  name: web
  namespace: web
  resourceVersion: "12"
  uid: 07e7413f-a298-4220-99ab-b55bab9c8466
spec:
  progressDeadlineSeconds: 600
  replicas: 3
  revisionHistoryLimit: 10
  selector:
    matchLabels:
      app: web
  strategy:
    rollingUpdate:
      maxSurge: 25%
      maxUnavailable: 25%
    type: RollingUpdate
  template:
    metadata:
      labels:
        app: web
        tier: frontend
    spec:
      containers:
      - env:
        - name: DB_PASSWORD
          valueFrom:
            secretKeyRef:
              key: password
              name: web-credentials
        envFrom:
        - configMapRef:
            name: web-config
        image: nginx:1.27
        imagePullPolicy: IfNotPresent
        name: nginx
        ports:
        - containerPort: 8080
          name: http
          protocol: TCP
        resources:
          limits:
            memory: 128Mi
          requests:
            cpu: 100m
            memory: 64Mi
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
      dnsPolicy: ClusterFirst
      restartPolicy: Always
      schedulerName: default-scheduler
      securityContext: {}
      serviceAccount: web
      serviceAccountName: web
      terminationGracePeriodSeconds: 30
status: {}
"#;

/// `get all -n web` after the edited apply.
const GET_ALL: &str = "\
NAME          TYPE        CLUSTER-IP   EXTERNAL-IP   PORT(S)          AGE
service/web   ClusterIP   10.0.0.10    <none>        80/TCP,443/TCP   5s

NAME                  READY   UP-TO-DATE   AVAILABLE   AGE
deployment.apps/web   0/3     0            0           5s

NAME                   SCHEDULE    TIMEZONE   SUSPEND   ACTIVE   LAST SCHEDULE   AGE
cronjob.batch/report   0 4 * * *   <none>     False     0        <none>          5s

NAME                STATUS    COMPLETIONS   DURATION   AGE
job.batch/migrate   Running   0/1                      5s
";

/// The ConfigMap's `nginx.conf`, as the manifest indents it under `data`.
const NGINX_CONF: &str = "    server {\n      listen 8080;\n      location / {\n        root /usr/share/nginx/html;\n      }\n    }\n";

/// `get configmap web-config -o yaml` after `patch`, `edit` and `replace` (which dropped
/// the annotations).
const CONFIGMAP_YAML: &str = r#"apiVersion: v1
data:
  FEATURE: disabled
  LOG_LEVEL: warn
  nginx.conf: |
    server {
      listen 8080;
      location / {
        root /usr/share/nginx/html;
      }
    }
kind: ConfigMap
metadata:
  creationTimestamp: "2026-11-30T13:05:46Z"
  labels:
    app: web
    release: v1
  name: web-config
  namespace: web
  resourceVersion: "30"
  uid: 4b1f8a8e-6f57-4c9e-a0f6-2f4f3c7b1d10
"#;

// ---------------------------------------------------------------------------------------
// The scenario.

fn scenario(r: &mut Run) {
    let dir = manifests().display().to_string();
    discovery(r);

    // apply -f of the folder: every object created, in file order.
    r.expect(&["apply", "-f", &dir], None, CREATED);
    // Applied again unchanged, but for the Secret: its `stringData` is folded into `data`
    // by the server, so kubectl's patch always carries it again (as with kube-apiserver:
    // kubernetes/kubernetes#87736).
    r.expect(
        &["apply", "-f", &dir],
        None,
        &CREATED.replace(" created", " unchanged").replace(
            "secret/web-credentials unchanged",
            "secret/web-credentials configured",
        ),
    );
    r.expect(
        &[
            "get",
            "deployment",
            "web",
            "-n",
            "web",
            "-o",
            r"jsonpath={.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}",
        ],
        None,
        LAST_APPLIED_FIRST,
    );

    // apply after an edit: a strategic merge patch computed from the last-applied
    // annotation (the dropped label goes, the new Service port is merged by port).
    let edited_dir = r.scratch.join("edited");
    std::fs::create_dir_all(&edited_dir).expect("a scratch folder");
    for name in ["app.yaml", "batch.yaml", "rbac.yaml"] {
        std::fs::write(edited_dir.join(name), edited(name)).expect("writing a manifest");
    }
    let edited_dir = edited_dir.display().to_string();
    r.expect(&["apply", "-f", &edited_dir], None, APPLIED_EDIT);
    r.expect(
        &[
            "get",
            "deployment",
            "web",
            "-n",
            "web",
            "-o",
            "jsonpath={.spec.replicas} {.metadata.labels}",
        ],
        None,
        r#"3 {"app":"web"}"#,
    );

    get_outputs(r);
    describe(r);
    label_annotate_patch(r);
    scale_set_image_wait_and_watch(r);
    edit_replace_diff(r);
    delete(r);
}

fn discovery(r: &mut Run) {
    let versions = r.run(&["api-versions"], None);
    let lines: Vec<&str> = versions.lines().collect();
    let mut sorted = lines.clone();
    sorted.sort_unstable();
    sorted.dedup();
    r.check(
        lines == sorted,
        "kubectl api-versions: sorted, once each",
        || versions.clone(),
    );
    for gv in [
        "apps/v1",
        "autoscaling/v2",
        "batch/v1",
        "networking.k8s.io/v1",
        "policy/v1",
        "rbac.authorization.k8s.io/v1",
        "v1",
    ] {
        r.check(lines.contains(&gv), "kubectl api-versions", || {
            format!("no {gv}:\n{versions}")
        });
    }

    let resources = r.run(&["api-resources"], None);
    let rows: Vec<String> = resources.lines().map(squash).collect();
    for row in [
        "NAME SHORTNAMES APIVERSION NAMESPACED KIND",
        "configmaps cm v1 true ConfigMap",
        "namespaces ns v1 false Namespace",
        "secrets v1 true Secret",
        "serviceaccounts sa v1 true ServiceAccount",
        "services svc v1 true Service",
        "deployments deploy apps/v1 true Deployment",
        "cronjobs cj batch/v1 true CronJob",
        "jobs batch/v1 true Job",
        "ingresses ing networking.k8s.io/v1 true Ingress",
        "rolebindings rbac.authorization.k8s.io/v1 true RoleBinding",
        "roles rbac.authorization.k8s.io/v1 true Role",
    ] {
        r.check(
            rows.iter().any(|l| l == row),
            "kubectl api-resources",
            || format!("no row {row:?}:\n{resources}"),
        );
    }
    r.expect(
        &["api-resources", "--api-group=apps", "-o", "name"],
        None,
        "controllerrevisions.apps\ndaemonsets.apps\ndeployments.apps\nreplicasets.apps\nstatefulsets.apps\n",
    );
    r.expect(
        &["api-resources", "--api-group=batch", "-o", "wide"],
        None,
        "\
NAME       SHORTNAMES   APIVERSION   NAMESPACED   KIND      VERBS                                                        CATEGORIES
cronjobs   cj           batch/v1     true         CronJob   create,delete,deletecollection,get,list,patch,update,watch   all
jobs                    batch/v1     true         Job       create,delete,deletecollection,get,list,patch,update,watch   all
",
    );

    // explain reads the served OpenAPI (v3 for every release here).
    let explained = r.run(
        &["explain", "deployment.spec.template.spec.containers"],
        None,
    );
    for expected in [
        "GROUP:      apps",
        "KIND:       Deployment",
        "VERSION:    v1",
        "FIELD: containers <[]Container>",
        "    List of containers belonging to the pod. Containers cannot currently be",
        "    A single application container that you want to run within a pod.",
        "FIELDS:",
        "  args\t<[]string>",
        "  env\t<[]EnvVar>",
        "  image\t<string>",
        "  name\t<string> -required-",
        "  ports\t<[]ContainerPort>",
        "  resources\t<ResourceRequirements>",
        "  securityContext\t<SecurityContext>",
    ] {
        r.check(
            explained.lines().any(|l| l == expected),
            "kubectl explain deployment.spec.template.spec.containers",
            || format!("no line {expected:?}:\n{explained}"),
        );
    }
    let image = r.run(
        &["explain", "deployment.spec.template.spec.containers.image"],
        None,
    );
    r.check(
        image.contains("FIELD: image <string>") && image.contains("Container image name."),
        "kubectl explain deployment.spec.template.spec.containers.image",
        || image.clone(),
    );
}

fn get_outputs(r: &mut Run) {
    r.expect(
        &["get", "deployments", "-n", "web"],
        None,
        "\
NAME   READY   UP-TO-DATE   AVAILABLE   AGE
web    0/3     0            0           5s
",
    );
    r.expect(
        &["get", "deployment", "web", "-n", "web", "-o", "wide"],
        None,
        "\
NAME   READY   UP-TO-DATE   AVAILABLE   AGE   CONTAINERS   IMAGES       SELECTOR
web    0/3     0            0           5s    nginx        nginx:1.27   app=web
",
    );
    r.expect(
        &["get", "deployment", "web", "-n", "web", "-o", "yaml"],
        None,
        DEPLOYMENT_YAML,
    );

    // The Service as JSON: ClusterIP allocated, kube's defaults, the merged ports.
    let out = r.run(&["get", "service", "web", "-n", "web", "-o", "json"], None);
    match serde_json::from_str::<Value>(&out) {
        Ok(svc) => {
            let ip = svc["spec"]["clusterIP"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            r.check(
                is_ipv4(&ip),
                "service/web clusterIP is an IPv4 address",
                || out.clone(),
            );
            let expected = json!({
                "clusterIP": ip,
                "clusterIPs": [ip],
                "internalTrafficPolicy": "Cluster",
                "ipFamilies": ["IPv4"],
                "ipFamilyPolicy": "SingleStack",
                "ports": [
                    {"name": "http", "port": 80, "protocol": "TCP", "targetPort": "http"},
                    {"name": "https", "port": 443, "protocol": "TCP", "targetPort": 8443}
                ],
                "selector": {"app": "web"},
                "sessionAffinity": "None",
                "type": "ClusterIP"
            });
            r.check(
                svc["spec"] == expected,
                "kubectl get service web -o json: .spec",
                || format!("expected {expected:#}\nactual {:#}", svc["spec"]),
            );
            r.check(
                svc["status"] == json!({"loadBalancer": {}}),
                "kubectl get service web -o json: .status",
                || {
                    format!(
                        "expected {{\"loadBalancer\":{{}}}}\nactual {:#}",
                        svc["status"]
                    )
                },
            );
            r.check(
                svc["kind"] == "Service" && svc["apiVersion"] == "v1",
                "kubectl get service web -o json: kind",
                || out.clone(),
            );
        }
        Err(e) => r.fail(
            "kubectl get service web -o json",
            format!("invalid JSON ({e}):\n{out}"),
        ),
    }
    r.expect(
        &["get", "services", "-n", "web", "-o", "wide"],
        None,
        "\
NAME   TYPE        CLUSTER-IP   EXTERNAL-IP   PORT(S)          AGE   SELECTOR
web    ClusterIP   10.0.0.10    <none>        80/TCP,443/TCP   5s    app=web
",
    );
    r.expect(&["get", "all", "-n", "web"], None, GET_ALL);
    r.expect(
        &[
            "get",
            "configmaps,secrets,serviceaccounts,roles,rolebindings",
            "-n",
            "web",
            "-l",
            "app=web",
            "--show-labels",
        ],
        None,
        "\
NAME                   DATA   AGE   LABELS
configmap/web-config   2      5s    app=web

NAME                     TYPE     DATA   AGE   LABELS
secret/web-credentials   Opaque   2      5s    app=web

NAME                 SECRETS   AGE   LABELS
serviceaccount/web   0         5s    app=web

NAME                                        CREATED AT             LABELS
role.rbac.authorization.k8s.io/web-reader   2026-11-30T13:05:46Z   app=web

NAME                                               ROLE              AGE   LABELS
rolebinding.rbac.authorization.k8s.io/web-reader   Role/web-reader   5s    app=web
",
    );
    r.expect(
        &["get", "jobs,cronjobs,ingresses", "-n", "web"],
        None,
        "\
NAME                STATUS    COMPLETIONS   DURATION   AGE
job.batch/migrate   Running   0/1                      5s

NAME                   SCHEDULE    TIMEZONE   SUSPEND   ACTIVE   LAST SCHEDULE   AGE
cronjob.batch/report   0 4 * * *   <none>     False     0        <none>          5s

NAME                            CLASS   HOSTS              ADDRESS   PORTS   AGE
ingress.networking.k8s.io/web   nginx   shop.example.com             80      5s
",
    );
    r.expect(
        &["get", "rolebindings", "-n", "web", "-o", "wide"],
        None,
        "\
NAME         ROLE              AGE   USERS   GROUPS   SERVICEACCOUNTS
web-reader   Role/web-reader   5s                     web/web
",
    );
    r.expect(
        &["get", "namespace", "web", "--show-labels"],
        None,
        "\
NAME   STATUS   AGE   LABELS
web    Active   5s    kubernetes.io/metadata.name=web,team=storefront
",
    );

    // jsonpath: across kinds, and kube-apiserver's defaulting of each kind.
    r.expect(
        &[
            "get",
            "deployments,services,configmaps",
            "-n",
            "web",
            "-l",
            "app=web",
            "-o",
            r#"jsonpath={range .items[*]}{.kind}/{.metadata.name}{"\n"}{end}"#,
        ],
        None,
        "Deployment/web\nService/web\nConfigMap/web-config\n",
    );
    r.expect(
        &[
            "get",
            "secret",
            "web-credentials",
            "-n",
            "web",
            "-o",
            "jsonpath={.data} {.stringData}",
        ],
        None,
        r#"{"password":"czNjcjN0","username":"YWRtaW4="} "#,
    );
    r.expect(
        &[
            "get",
            "job",
            "migrate",
            "-n",
            "web",
            "-o",
            r"jsonpath={.spec.completions} {.spec.parallelism} {.spec.completionMode} {.spec.suspend} {.spec.template.metadata.labels.batch\.kubernetes\.io/job-name} {.spec.template.spec.dnsPolicy} {.spec.template.spec.containers[0].imagePullPolicy}",
        ],
        None,
        "1 1 NonIndexed false migrate ClusterFirst IfNotPresent",
    );
    r.expect(
        &[
            "get",
            "cronjob",
            "report",
            "-n",
            "web",
            "-o",
            "jsonpath={.spec.schedule}|{.spec.concurrencyPolicy} {.spec.suspend} {.spec.successfulJobsHistoryLimit} {.spec.failedJobsHistoryLimit}",
        ],
        None,
        "0 4 * * *|Allow false 3 1",
    );
    r.expect(
        &[
            "get",
            "namespace",
            "web",
            "-o",
            "jsonpath={.spec.finalizers} {.status.phase}",
        ],
        None,
        r#"["kubernetes"] Active"#,
    );
    r.expect(
        &[
            "get",
            "ingress",
            "web",
            "-n",
            "web",
            "-o",
            "jsonpath={.spec.rules[0].http.paths[0].backend.service.port.name} {.status}",
        ],
        None,
        r#"http {"loadBalancer":{}}"#,
    );

    // custom-columns, with a list flattened by `[*]`.
    r.expect(
        &[
            "get",
            "service",
            "web",
            "-n",
            "web",
            "-o",
            "custom-columns=NAME:.metadata.name,TYPE:.spec.type,PORTS:.spec.ports[*].port,TARGETS:.spec.ports[*].targetPort",
        ],
        None,
        "\
NAME   TYPE        PORTS    TARGETS
web    ClusterIP   80,443   http,8443
",
    );
    r.expect(
        &[
            "get",
            "deployment",
            "web",
            "-n",
            "web",
            "-o",
            "custom-columns=NAME:.metadata.name,REPLICAS:.spec.replicas,STRATEGY:.spec.strategy.type,IMAGE:.spec.template.spec.containers[0].image",
        ],
        None,
        "\
NAME   REPLICAS   STRATEGY        IMAGE
web    3          RollingUpdate   nginx:1.27
",
    );
}

fn describe(r: &mut Run) {
    r.expect_lines(
        &["describe", "deployment", "web", "-n", "web"],
        &[
            "Name:                   web",
            "Namespace:              web",
            "Labels:                 app=web",
            "Annotations:            <none>",
            "Selector:               app=web",
            "Replicas:               3 desired | 0 updated | 0 total | 0 available | 0 unavailable",
            "StrategyType:           RollingUpdate",
            "MinReadySeconds:        0",
            "RollingUpdateStrategy:  25% max unavailable, 25% max surge",
            "Pod Template:",
            "  Labels:           app=web",
            "                    tier=frontend",
            "  Service Account:  web",
            "  Containers:",
            "   nginx:",
            "    Image:      nginx:1.27",
            "    Limits:",
            "      memory:  128Mi",
            "    Requests:",
            "      cpu:     100m",
            "      memory:  64Mi",
            "    Environment Variables from:",
            "      web-config  ConfigMap  Optional: false",
            "    Environment:",
            "      DB_PASSWORD:  <set to the key 'password' in secret 'web-credentials'>  Optional: false",
            "Events:          <none>",
        ],
    );
    // kubectl prints the internal traffic policy from 1.31 on.
    let minor = r.version.map_or(u32::MAX, |v| {
        v.trim_start_matches("1.").parse().unwrap_or(0)
    });
    let traffic_policy = if minor >= 31 {
        "Internal Traffic Policy:  Cluster"
    } else {
        "Session Affinity:         None"
    };
    r.expect_lines(
        &["describe", "service", "web", "-n", "web"],
        &[
            "Name:                     web",
            "Namespace:                web",
            "Labels:                   app=web",
            "Annotations:              <none>",
            "Selector:                 app=web",
            "Type:                     ClusterIP",
            "IP Family Policy:         SingleStack",
            "IP Families:              IPv4",
            "Port:                     http  80/TCP",
            "TargetPort:               http/TCP",
            "Port:                     https  443/TCP",
            "TargetPort:               8443/TCP",
            "Session Affinity:         None",
            traffic_policy,
            "Events:                   <none>",
        ],
    );
    r.expect_lines(
        &["describe", "configmap", "web-config", "-n", "web"],
        &[
            "Name:         web-config",
            "Namespace:    web",
            "Labels:       app=web",
            "Annotations:  <none>",
            "LOG_LEVEL:",
            "debug",
            "nginx.conf:",
            "Events:  <none>",
        ],
    );
}

fn label_annotate_patch(r: &mut Run) {
    r.expect(
        &["label", "deployment", "web", "-n", "web", "env=prod"],
        None,
        "deployment.apps/web labeled\n",
    );
    // kubectl 1.27 itself prints "annotate" (its own message, whatever the server).
    let annotated = if r.version == Some("1.27") {
        "deployment.apps/web annotate\n"
    } else {
        "deployment.apps/web annotated\n"
    };
    r.expect(
        &[
            "annotate",
            "deployment",
            "web",
            "-n",
            "web",
            "team.example.com/owner=storefront",
        ],
        None,
        annotated,
    );
    r.expect(
        &["get", "deployment", "web", "-n", "web", "--show-labels"],
        None,
        "\
NAME   READY   UP-TO-DATE   AVAILABLE   AGE   LABELS
web    0/3     0            0           5s    app=web,env=prod
",
    );
    r.expect(
        &[
            "get",
            "deployment",
            "web",
            "-n",
            "web",
            "-o",
            r"jsonpath={.metadata.annotations.team\.example\.com/owner}",
        ],
        None,
        "storefront",
    );
    r.expect(
        &[
            "label",
            "configmaps,secrets",
            "-n",
            "web",
            "-l",
            "app=web",
            "release=v1",
        ],
        None,
        "configmap/web-config labeled\nsecret/web-credentials labeled\n",
    );
    r.expect(
        &[
            "label",
            "secret",
            "web-credentials",
            "-n",
            "web",
            "release-",
        ],
        None,
        "secret/web-credentials unlabeled\n",
    );
    r.expect(
        &[
            "get",
            "configmaps,secrets",
            "-n",
            "web",
            "-l",
            "release=v1",
            "-o",
            "name",
        ],
        None,
        "configmap/web-config\n",
    );

    // Strategic merge patch (kubectl's default type): the container is merged by name,
    // its env list by name, so DB_PASSWORD stays.
    r.expect(
        &[
            "patch",
            "deployment",
            "web",
            "-n",
            "web",
            "-p",
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"nginx","env":[{"name":"MODE","value":"blue"}]}]}}}}"#,
        ],
        None,
        "deployment.apps/web patched\n",
    );
    r.expect(
        &[
            "get",
            "deployment",
            "web",
            "-n",
            "web",
            "-o",
            r#"jsonpath={.spec.template.spec.containers[0].env[?(@.name=="MODE")].value} {.spec.template.spec.containers[0].env[?(@.name=="DB_PASSWORD")].valueFrom.secretKeyRef.name} {.spec.template.spec.containers[*].name} {.metadata.generation}"#,
        ],
        None,
        "blue web-credentials nginx 3",
    );
    // Merge patch.
    r.expect(
        &[
            "patch",
            "service",
            "web",
            "-n",
            "web",
            "--type",
            "merge",
            "-p",
            r#"{"metadata":{"labels":{"tier":"frontend"}},"spec":{"sessionAffinity":"ClientIP"}}"#,
        ],
        None,
        "service/web patched\n",
    );
    r.expect(
        &[
            "get",
            "service",
            "web",
            "-n",
            "web",
            "-o",
            "jsonpath={.metadata.labels} {.spec.sessionAffinity} {.spec.sessionAffinityConfig.clientIP.timeoutSeconds}",
        ],
        None,
        r#"{"app":"web","tier":"frontend"} ClientIP 10800"#,
    );
    // JSON patch, then a patch that changes nothing.
    r.expect(
        &[
            "patch",
            "configmap",
            "web-config",
            "-n",
            "web",
            "--type",
            "json",
            "-p",
            r#"[{"op":"add","path":"/data/FEATURE","value":"enabled"}]"#,
        ],
        None,
        "configmap/web-config patched\n",
    );
    r.expect(
        &[
            "patch",
            "configmap",
            "web-config",
            "-n",
            "web",
            "--type",
            "merge",
            "-p",
            r#"{"data":{"FEATURE":"enabled"}}"#,
        ],
        None,
        "configmap/web-config patched (no change)\n",
    );
    r.expect(
        &[
            "get",
            "configmap",
            "web-config",
            "-n",
            "web",
            "-o",
            "jsonpath={.data.FEATURE}/{.data.LOG_LEVEL}",
        ],
        None,
        "enabled/debug",
    );
}

fn scale_set_image_wait_and_watch(r: &mut Run) {
    r.expect(
        &["scale", "deployment", "web", "-n", "web", "--replicas=4"],
        None,
        "deployment.apps/web scaled\n",
    );
    r.expect(
        &[
            "wait",
            "deployment/web",
            "-n",
            "web",
            "--for=jsonpath={.spec.replicas}=4",
            "--timeout=10s",
        ],
        None,
        "deployment.apps/web condition met\n",
    );
    r.expect(
        &[
            "set",
            "image",
            "deployment/web",
            "nginx=nginx:1.28",
            "-n",
            "web",
        ],
        None,
        "deployment.apps/web image updated\n",
    );
    r.expect(
        &["get", "deployment", "web", "-n", "web", "-o", "wide"],
        None,
        "\
NAME   READY   UP-TO-DATE   AVAILABLE   AGE   CONTAINERS   IMAGES       SELECTOR
web    0/4     0            0           5s    nginx        nginx:1.28   app=web
",
    );

    // get -w: the current state, then the update made while it watches.
    let mut watch = r.spawn(
        &[
            "get",
            "deployment",
            "web",
            "-n",
            "web",
            "-w",
            "--request-timeout=60s",
            "-o",
            "custom-columns=NAME:.metadata.name,REPLICAS:.spec.replicas,IMAGE:.spec.template.spec.containers[0].image",
        ],
        false,
    );
    let first = r.wait_line(
        &mut watch,
        "kubectl get deployment web -w: the current state",
        |l| squash(l) == "web 4 nginx:1.28",
    );
    if first.is_some() {
        r.expect(
            &["scale", "deployment/web", "-n", "web", "--replicas=5"],
            None,
            "deployment.apps/web scaled\n",
        );
        r.wait_line(
            &mut watch,
            "kubectl get deployment web -w: the update",
            |l| squash(l) == "web 5 nginx:1.28",
        );
    }
    watch.stop();
    let seen: Vec<String> = watch.lines().iter().map(|l| squash(l)).collect();
    r.check(
        seen == [
            "NAME REPLICAS IMAGE",
            "web 4 nginx:1.28",
            "web 5 nginx:1.28",
        ],
        "kubectl get deployment web -w: every line",
        || seen.join("\n"),
    );

    // The table of a watch, with the event types.
    let mut table = r.spawn(
        &[
            "get",
            "deployments",
            "-n",
            "web",
            "-w",
            "--output-watch-events",
            "--request-timeout=60s",
        ],
        false,
    );
    if r.wait_line(
        &mut table,
        "kubectl get deployments -w --output-watch-events: ADDED",
        |l| l.starts_with("ADDED"),
    )
    .is_some()
    {
        r.run(
            &["label", "deployment", "web", "-n", "web", "watched=yes"],
            None,
        );
        r.wait_line(
            &mut table,
            "kubectl get deployments -w --output-watch-events: MODIFIED",
            |l| l.starts_with("MODIFIED"),
        );
    }
    table.stop();
    let text = table.lines().join("\n") + "\n";
    r.compare(
        "kubectl get deployments -n web -w --output-watch-events",
        "\
EVENT      NAME   READY   UP-TO-DATE   AVAILABLE   AGE
ADDED      web    0/5     0            0           5s
MODIFIED   web    0/5     0            0           5s
",
        &text,
    );
}

fn edit_replace_diff(r: &mut Run) {
    // edit, with EDITOR a script that changes the file kubectl hands it.
    let editor = r.write(
        "editor.sh",
        "#!/bin/sh\nsed -i 's/LOG_LEVEL: debug/LOG_LEVEL: warn/' \"$1\"\n",
    );
    Command::new("chmod")
        .args(["+x", &editor])
        .status()
        .expect("chmod");
    let args = ["edit", "configmap", "web-config", "-n", "web"];
    let out = r.exec(&args, None, &[("EDITOR", editor.as_str())]);
    let stdout = r.succeeded(&args, &out);
    if out.status.success() {
        r.compare(
            "kubectl edit configmap web-config",
            "configmap/web-config edited\n",
            &stdout,
        );
    }
    r.expect(
        &[
            "get",
            "configmap",
            "web-config",
            "-n",
            "web",
            "-o",
            "jsonpath={.data.LOG_LEVEL}",
        ],
        None,
        "warn",
    );
    // An editor that changes nothing: kubectl cancels.
    let noop = r.write("noop.sh", "#!/bin/sh\ntrue\n");
    Command::new("chmod")
        .args(["+x", &noop])
        .status()
        .expect("chmod");
    let out = r.exec(&args, None, &[("EDITOR", noop.as_str())]);
    let stdout = r.succeeded(&args, &out);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    r.check(
        stdout.is_empty() && stderr.trim() == "Edit cancelled, no changes made.",
        "kubectl edit configmap web-config (no change)",
        || format!("--- stdout\n{stdout}--- stderr\n{stderr}"),
    );

    // replace with a whole manifest: an update of everything, so the last-applied
    // annotation, absent from the manifest, goes.
    let stale = r.run(
        &["get", "configmap", "web-config", "-n", "web", "-o", "yaml"],
        None,
    );
    let replacement = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\n  namespace: web\n  labels:\n    app: web\n    release: v1\ndata:\n  FEATURE: disabled\n  LOG_LEVEL: warn\n  nginx.conf: |\n{}",
        NGINX_CONF
    );
    r.expect(
        &["replace", "-f", "-"],
        Some(&replacement),
        "configmap/web-config replaced\n",
    );
    r.expect(
        &["get", "configmap", "web-config", "-n", "web", "-o", "yaml"],
        None,
        CONFIGMAP_YAML,
    );
    // replace with what `get -o yaml` printed before: a stale resourceVersion, a conflict.
    let out = r.exec(&["replace", "-f", "-"], Some(&stale), &[]);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    r.check(
        !out.status.success()
            && stderr.contains("Error from server (Conflict): error when replacing \"STDIN\": Operation cannot be fulfilled on configmaps \"web-config\": the object has been modified; please apply your changes to the latest version and try again"),
        "kubectl replace -f - (stale resourceVersion)",
        || format!("exit {}\n{stderr}", out.status),
    );

    // diff: nothing to show (exit 0), then a change (exit 1 and a unified diff). kubectl
    // diffs the live object with a dry-run patch that leaves the last-applied
    // annotation alone, so only the data changes.
    let flags = |checkout: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: feature-flags\n  namespace: web\ndata:\n  checkout: {checkout}\n"
        )
    };
    r.expect(
        &["apply", "-f", "-"],
        Some(&flags("v1")),
        "configmap/feature-flags created\n",
    );
    let out = r.exec(&["diff", "-f", "-"], Some(&flags("v1")), &[]);
    r.check(
        out.status.code() == Some(0) && out.stdout.is_empty(),
        "kubectl diff -f - (no change): exit 0, no output",
        || {
            format!(
                "exit {}\n--- stdout\n{}--- stderr\n{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        },
    );
    let out = r.exec(&["diff", "-f", "-"], Some(&flags("v2")), &[]);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let changes: Vec<&str> = stdout
        .lines()
        .filter(|l| {
            (l.starts_with('-') || l.starts_with('+'))
                && !l.starts_with("---")
                && !l.starts_with("+++")
        })
        .collect();
    let headers_ok = stdout
        .lines()
        .any(|l| l.starts_with("diff -u -N ") && l.ends_with("/v1.ConfigMap.web.feature-flags"));
    r.check(
        out.status.code() == Some(1)
            && headers_ok
            && changes == ["-  checkout: v1", "+  checkout: v2"],
        "kubectl diff -f - (a change): exit 1, the changed lines",
        || {
            format!(
                "exit {}\n--- stdout\n{stdout}--- stderr\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            )
        },
    );
    // diff is a dry run: nothing changed.
    r.expect(
        &[
            "get",
            "configmap",
            "feature-flags",
            "-n",
            "web",
            "-o",
            "jsonpath={.data.checkout}",
        ],
        None,
        "v1",
    );
}

fn delete(r: &mut Run) {
    let rbac = manifests().join("rbac.yaml").display().to_string();
    r.expect(
        &["delete", "-f", &rbac],
        None,
        "\
serviceaccount \"web\" deleted
role.rbac.authorization.k8s.io \"web-reader\" deleted
rolebinding.rbac.authorization.k8s.io \"web-reader\" deleted
",
    );
    r.expect(
        &["delete", "configmaps,secrets", "-n", "web", "-l", "app=web"],
        None,
        "configmap \"web-config\" deleted\nsecret \"web-credentials\" deleted\n",
    );
    r.expect(
        &["delete", "jobs,cronjobs", "-n", "web", "--all"],
        None,
        "job.batch \"migrate\" deleted\ncronjob.batch \"report\" deleted\n",
    );
    r.expect_nothing(
        &[
            "get",
            "jobs,cronjobs,configmaps,secrets,serviceaccounts,roles,rolebindings",
            "-n",
            "web",
            "-l",
            "app=web",
        ],
        "No resources found in web namespace.\n",
    );

    // wait --for=delete: a finalizer holds the object until a patch removes it.
    r.expect(
        &["apply", "-f", "-"],
        Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  namespace: web\n  finalizers: [example.com/hold]\ndata:\n  k: v\n"),
        "configmap/held created\n",
    );
    r.expect(
        &["delete", "configmap", "held", "-n", "web", "--wait=false"],
        None,
        "configmap \"held\" deleted\n",
    );
    let out = r.exec(
        &[
            "wait",
            "--for=delete",
            "configmap/held",
            "-n",
            "web",
            "--timeout=1s",
        ],
        None,
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    r.check(
        !out.status.success()
            && stderr.contains("timed out waiting for the condition on configmaps/held"),
        "kubectl wait --for=delete --timeout=1s (held by a finalizer)",
        || format!("exit {}\n{stderr}", out.status),
    );
    let mut waiter = r.spawn(
        &[
            "wait",
            "--for=delete",
            "configmap/held",
            "-n",
            "web",
            "--timeout=30s",
            "-v=6",
        ],
        true,
    );
    if r.wait_line(&mut waiter, "kubectl wait --for=delete: watching", |l| {
        l.contains("watch=true") && l.contains("200 OK")
    })
    .is_some()
    {
        r.expect(
            &[
                "patch",
                "configmap",
                "held",
                "-n",
                "web",
                "--type",
                "merge",
                "-p",
                r#"{"metadata":{"finalizers":null}}"#,
            ],
            None,
            "configmap/held patched\n",
        );
        r.wait_line(
            &mut waiter,
            "kubectl wait --for=delete: condition met",
            |l| l == "configmap/held condition met",
        );
    }
    waiter.stop();

    r.expect(
        &["delete", "deployments,services,ingresses", "-n", "web", "-l", "app=web"],
        None,
        "deployment.apps \"web\" deleted\nservice \"web\" deleted\ningress.networking.k8s.io \"web\" deleted\n",
    );
    r.expect_nothing(
        &["get", "all", "-n", "web"],
        "No resources found in web namespace.\n",
    );
    r.expect(
        &["delete", "namespace", "web", "--timeout=60s"],
        None,
        "namespace \"web\" deleted\n",
    );
    r.expect_error(
        &["get", "namespace", "web"],
        "Error from server (NotFound): namespaces \"web\" not found\n",
    );
}

/// Runs the scenario with one release (`None`: the default kubectl) on a fresh server.
fn run_release(version: Option<&str>) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let kapi = Kapi::start(Backend::Embedded);
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let mut run = Run {
        kapi: &kapi,
        version,
        failures: Vec::new(),
        scratch: scratch.path().to_path_buf(),
    };
    let started = std::time::Instant::now();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| scenario(&mut run)));
    eprintln!("{} ran in {:?}", run.name(), started.elapsed());
    if let Err(e) = outcome {
        eprintln!("server log:\n{}", kapi.log_text());
        std::panic::resume_unwind(e);
    }
    assert!(
        run.failures.is_empty(),
        "{} failed {} checks (server log: {}):\n\n{}",
        run.name(),
        run.failures.len(),
        kapi.data_dir().join("kapi.log").display(),
        run.failures.join("\n\n")
    );
}

#[test]
fn default_kubectl() {
    run_release(None);
}

#[test]
fn kubectl_1_27() {
    run_release(Some("1.27"));
}

#[test]
fn kubectl_1_28() {
    run_release(Some("1.28"));
}

#[test]
fn kubectl_1_29() {
    run_release(Some("1.29"));
}

#[test]
fn kubectl_1_30() {
    run_release(Some("1.30"));
}

#[test]
fn kubectl_1_31() {
    run_release(Some("1.31"));
}

#[test]
fn kubectl_1_32() {
    run_release(Some("1.32"));
}

#[test]
fn kubectl_1_33() {
    run_release(Some("1.33"));
}

/// Every release installed beside kubectl has its test above.
#[test]
fn every_installed_release_is_tested() {
    assert_eq!(
        kubectl_versions(),
        RELEASES,
        "kubectl releases beside kubectl"
    );
}

#[test]
fn normalize_hides_what_varies() {
    assert_eq!(
        normalize(
            "web    0/3     0    12s\n  uid: 07e7413f-a298-4220-99ab-b55bab9c8466\n  resourceVersion: \"12\"\n  creationTimestamp: \"2026-11-30T13:05:46Z\"\nweb   ClusterIP   10.0.0.1   <none>   2m3s\n"
        ),
        "web  0/3  0  <age>\n  uid: <uid>\n  resourceVersion: <rv>\n  creationTimestamp: <time>\nweb  ClusterIP  <ip>  <none>  <age>\n"
    );
    assert!(!is_age("80/TCP") && !is_age("s") && !is_age("0/3") && is_age("3d4h"));
}
