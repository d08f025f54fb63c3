"""The server's page in a real browser: its microphone button streams to /v1/realtime.

Headless Chromium plays a WAV as its (fake) microphone: three held-out sentences the bundled
model transcribes exactly, each preceded by a second of silence. The test starts tern-server on
a free loopback port, opens GET /, presses the microphone button, waits for the final texts,
presses stop, and requires the page's final text to be the clip's reference transcript. Then, against a server
with --api-key: a wrong key in the page's field is refused visibly, the right one streams,
and the server going away is shown as a closed connection. A screenshot and the page's text go to --out. Exits 77 (ctest's SKIP_RETURN_CODE) when
chromium, chromedriver or selenium is missing.

    /usr/bin/python3 tests/browser/live_page_test.py --server build/bin/tern-server \
        --model models/tiny-en --source . --out build/tests/browser
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import wave

SKIP = 77
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
# Held-out sentences (tests/data/heldout; about 2.4 s each, three voices) that the bundled
# model transcribes exactly when streamed with these pauses: `tern transcribe --live` on the
# clip.wav this test writes prints the same three lines (many other sentences it gets wrong).
CLIPS = ["000.wav", "010.wav", "008.wav"]
SILENCE_SECONDS = 1.0  # before each sentence: a pause the server's VAD cuts at
TAIL_SECONDS = 2.0  # after the last: its final arrives before stop is pressed


def skip(why):
    print("SKIP: " + why)
    sys.exit(SKIP)


def build_clip(source, path):
    """Writes the fake microphone's WAV; returns the expected final text."""
    refs = {}
    with open(os.path.join(source, "tests/data/heldout/transcripts.tsv"), encoding="utf-8") as f:
        for line in f:
            name, text = line.rstrip("\n").split("\t")[:2]
            refs[name] = text
    frames, rate = [], None
    for name in CLIPS:
        with wave.open(os.path.join(source, "tests/data/heldout", name)) as w:
            assert w.getnchannels() == 1 and w.getsampwidth() == 2, name
            rate = rate or w.getframerate()
            assert w.getframerate() == rate, name
            frames.append(b"\0\0" * int(SILENCE_SECONDS * rate))
            frames.append(w.readframes(w.getnframes()))
    frames.append(b"\0\0" * int(TAIL_SECONDS * rate))
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"".join(frames))
    return " ".join(refs[name] for name in CLIPS)


def start_server(binary, model, log_path, extra=()):
    """tern-server on 127.0.0.1, port 0; returns (process, port) once it listens."""
    log = open(log_path, "wb")
    proc = subprocess.Popen(
        [binary, "--model", model, "--host", "127.0.0.1", "--port", "0", "--sessions", "1",
         "--threads", "1", "--realtime-sessions", "1", "--realtime-threads", "1", *extra],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    log.close()
    deadline = min(time.monotonic() + 30, END)  # the model loads first; a machine may be loaded
    marker = b"listening on http://127.0.0.1:"
    while time.monotonic() < deadline:
        with open(log_path, "rb") as f:
            text = f.read()
        at = text.find(marker)
        if at >= 0:
            digits = text[at + len(marker):].split(b" ")[0]
            return proc, int(digits)
        if proc.poll() is not None:
            raise AssertionError("tern-server exited %d:\n%s" % (proc.returncode, text.decode()))
        time.sleep(0.1)
    stop_process(proc)
    raise AssertionError("tern-server did not listen within 30 s")


def stop_process(proc):
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)


def leftover_browsers(profile):
    """Pids of processes whose command line names this run's profile directory."""
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if profile.encode() in f.read():
                    pids.append(int(pid))
        except OSError:
            pass
    return pids


# The whole test ends within this many seconds of its start (ctest's TIMEOUT is a backstop that
# would leave processes behind); each wait below has its own bound inside it.
BUDGET_SECONDS = 80
END = time.monotonic() + BUDGET_SECONDS


def become_subreaper():
    """Chromium double-forks helpers (crashpad, zygotes); as a subreaper this process inherits
    them when their parents exit, instead of PID 1, so it can reap them itself."""
    import ctypes
    try:
        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (AttributeError, OSError):
        pass  # not Linux: orphans go to init, which reaps them


def reap_children(seconds):
    """Waits up to `seconds` for every child (and inherited orphan) to exit, reaping each."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return True  # none left
        if pid == 0:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)


def wait_for(what, predicate, seconds, required=True):
    """Polls predicate until it returns a true value; after `seconds`, an AssertionError (or
    False when not `required`)."""
    deadline = min(time.monotonic() + seconds, END)
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            if not required:
                return False
            raise AssertionError("no %s within %g s" % (what, seconds))
        time.sleep(0.1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            skip("%s is not installed (Debian: chromium chromium-driver; scripts/setup)" % path)
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.by import By
    except ImportError:
        skip("python selenium is not installed for %s (Debian: python3-selenium)" % sys.executable)

    os.makedirs(a.out, exist_ok=True)
    become_subreaper()
    started = time.monotonic()
    clip = os.path.join(a.out, "clip.wav")
    expected = build_clip(a.source, clip)
    profile = tempfile.mkdtemp(prefix="tern-browser-")
    server = driver = service = None
    try:
        server, port = start_server(a.server, a.model, os.path.join(a.out, "server.log"))
        opts = webdriver.ChromeOptions()
        opts.binary_location = CHROMIUM
        for arg in ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--user-data-dir=" + profile, "--window-size=1000,900",
                    "--autoplay-policy=no-user-gesture-required",
                    "--use-fake-ui-for-media-stream",  # grants the microphone without asking
                    "--use-fake-device-for-media-stream",
                    # the WAV as the microphone, played once from getUserMedia on (without
                    # %noloop it repeats), then silence
                    "--use-file-for-fake-audio-capture=" + clip + "%noloop"]:
            opts.add_argument(arg)
        service = Service(CHROMEDRIVER, log_path=os.path.join(a.out, "chromedriver.log"))
        driver = webdriver.Chrome(service=service, options=opts)
        driver.set_page_load_timeout(30)
        driver.get("http://127.0.0.1:%d/" % port)
        assert driver.find_element(By.ID, "file"), "the upload form is gone"

        status = driver.find_element(By.ID, "live-status")
        state = lambda: status.get_attribute("data-state")
        driver.find_element(By.ID, "mic").click()
        wait_for("live state", lambda: state() in ("live", "error"), 20)
        assert state() == "live", "the page says: " + status.text
        print("page: " + status.text)  # the AudioContext's rate, resampled from

        finals = lambda: driver.find_elements(By.CSS_SELECTOR, "#final .final")
        partial = driver.find_element(By.ID, "partial")
        partials = set()  # the grey texts seen while the clip plays

        def done():
            text = partial.text
            if text:
                partials.add(text)
            return len(finals()) >= len(CLIPS) or state() == "error"

        # The clip plays in real time (12.1 s); a loaded machine decodes late. Stop is
        # pressed after this wait either way: what it commits is compared below.
        wait_for("final texts", done, 40, required=False)
        assert state() == "live", "the page says: " + status.text
        driver.find_element(By.ID, "stop").click()
        wait_for("stopped state", lambda: state() in ("stopped", "error"), 20)

        text = " ".join(f.text for f in finals())
        driver.save_screenshot(os.path.join(a.out, "live_page.png"))
        with open(os.path.join(a.out, "live_page.txt"), "w", encoding="utf-8") as f:
            f.write(driver.find_element(By.TAG_NAME, "body").text + "\n")
        assert state() == "stopped", "the page says: " + status.text
        assert driver.find_element(By.ID, "partial").text == "", "a partial left after stop"
        print("finals:   %r\nexpected: %r" % (text, expected))
        print("partials seen: %r" % sorted(partials))
        assert text == expected, "the page's final text differs from the clip's transcript"
        # Each sentence is spoken for over 2 s with an update every 0.5 s: words show (grey)
        # before its final does. (Partial words may be revised, so only their presence counts.)
        assert partials, "no partial text was shown"
        assert partial.value_of_css_property("color") != \
            finals()[0].value_of_css_property("color"), "partial and final text look the same"

        # --api-key: the page's key field travels as a WebSocket subprotocol (a browser cannot
        # set Authorization); a wrong key is refused visibly, and a server that goes away while
        # the microphone is on is reported as a closed connection.
        stop_process(server)
        server, port = start_server(a.server, a.model, os.path.join(a.out, "server_key.log"),
                                    ["--api-key", "s3cret"])
        driver.get("http://127.0.0.1:%d/" % port)
        status = driver.find_element(By.ID, "live-status")
        key = driver.find_element(By.ID, "key")
        key.send_keys("s3cre")
        driver.find_element(By.ID, "mic").click()
        wait_for("refusal", lambda: state() in ("live", "error"), 20)
        assert state() == "error" and "refused" in status.text, "the page says: " + status.text
        key.clear()
        key.send_keys("s3cret")
        driver.find_element(By.ID, "mic").click()
        wait_for("live state with the key", lambda: state() in ("live", "error"), 20)
        assert state() == "live", "the page says: " + status.text
        stop_process(server)  # SIGTERM closes the open realtime session
        wait_for("closed connection", lambda: state() != "live", 20)
        driver.save_screenshot(os.path.join(a.out, "live_page_closed.png"))
        assert state() == "error" and "closed" in status.text, "the page says: " + status.text
        r, g, b = [int(v) for v in status.value_of_css_property("color")
                   .split("(")[1].split(")")[0].split(",")[:3]]
        assert r > 2 * g and r > 2 * b, "the error is not shown in red: rgb(%d, %d, %d)" % (r, g, b)
    finally:
        try:
            if driver is not None:
                driver.quit()
            elif service is not None:
                service.stop()
        except Exception as e:  # a dead chromedriver: its browser is found below
            print("quitting the browser: %r" % e)
        stop_process(server)
        deadline = time.monotonic() + 10  # quit returns while the browser may still exit
        while (left := leftover_browsers(profile)) and time.monotonic() < deadline:
            time.sleep(0.2)
        for pid in left:  # this run's own browser processes, if quit missed any
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(profile, ignore_errors=True)
        reap_children(10)
    assert not left, "browser processes left after quit: %s" % left
    print("ok in %.1f s; screenshot and page text in %s" % (time.monotonic() - started, a.out))


if __name__ == "__main__":
    main()
