"""The Spark read-back checks run pyspark, which starts a JVM: without a
Java runtime (17 or later) they would fail with a long stack trace. Each
Spark script calls `require()` first, which ends it with one line naming
what is missing instead. `make test` installs a runtime where it can
(`scripts/need-java`)."""
import os
import re
import shutil
import subprocess
import sys

HINT = "install a Java runtime, e.g. `apt-get install default-jre-headless`, or set JAVA_HOME"


def require(minimum=17):
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if home and not os.access(java, os.X_OK):
        sys.exit(f"the Spark checks need Java {minimum} or later: JAVA_HOME={home} has no bin/java")
    if not java or not os.access(java, os.X_OK):
        sys.exit(f"the Spark checks need Java {minimum} or later and found none: {HINT}")
    try:
        banner = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60).stderr
    except (OSError, subprocess.SubprocessError) as e:
        sys.exit(f"the Spark checks need Java {minimum} or later; {java} did not run ({e}): {HINT}")
    m = re.search(r'version "(\d+)(?:\.(\d+))?', banner)
    major = int(m.group(1)) if m else 0
    if major == 1 and m.group(2):
        major = int(m.group(2))
    if major < minimum:
        sys.exit(f"the Spark checks need Java {minimum} or later; {java} is {major or 'of an unknown version'}: {HINT}")
