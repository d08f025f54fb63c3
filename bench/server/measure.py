# Hostile-client and throughput figures for two tern-server binaries, side by side:
#   python3 bench/server/measure.py OLD_BIN NEW_BIN [all|bomb|slow|term|rps]
# bomb: RSS while one connection sends GET / and 256 MB without a newline; slow: /health
# latency while 64 clients send a byte a second; term: seconds from SIGTERM to exit while a
# client trickles bytes (30 s cap); rps: 32 clients x 10 transcriptions of the heldout clips,
# --sessions 2 -t 1, the two binaries alternating. Loopback only; models/tiny-en.
import http.client, os, signal, socket, subprocess, sys, threading, time, statistics, uuid
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
MODEL = ROOT + '/models/tiny-en'
CLIPS = [ROOT + '/tests/data/heldout/%03d.wav' % i for i in range(6)]

def start(binary, *extra):
    p = subprocess.Popen([binary, '--model', MODEL, '--port', '0', *extra], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline()
    port = int(line.split('127.0.0.1:')[1].split()[0])
    return p, port

def rss(pid):
    for l in open('/proc/%d/status' % pid):
        if l.startswith('VmRSS:'): return int(l.split()[1]) * 1024
    return 0

def stop(p, limit=30):
    t = time.time(); p.send_signal(signal.SIGTERM)
    try: p.wait(limit); return time.time() - t
    except subprocess.TimeoutExpired: p.kill(); p.wait(); return None

def header_bomb(binary, total_mb=256):
    p, port = start(binary, '-t', '1')
    base = rss(p.pid); peak = base; stop_flag = [False]
    def sample():
        nonlocal peak
        while not stop_flag[0]:
            try: peak = max(peak, rss(p.pid))
            except Exception: pass
            time.sleep(0.01)
    th = threading.Thread(target=sample); th.start()
    s = socket.create_connection(('127.0.0.1', port)); s.sendall(b'GET /')
    chunk = b'a' * (1 << 20); sent = 0
    try:
        while sent < total_mb << 20:
            s.sendall(chunk); sent += len(chunk)
    except OSError: pass
    time.sleep(0.3); held = rss(p.pid)
    s.close(); time.sleep(0.3); stop_flag[0] = True; th.join(); stop(p, 5)
    return sent >> 20, base >> 20, peak >> 20, held >> 20

def health_under_slow(binary, n=64, seconds=8):
    p, port = start(binary, '-t', '1')
    conns = [socket.create_connection(('127.0.0.1', port)) for _ in range(n)]
    req = b'GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ' + b'y' * 200
    lat = []; fails = 0; t0 = time.time(); i = 0; last = 0
    while time.time() - t0 < seconds:
        if time.time() - last >= 1:
            for c in conns:
                try: c.send(req[i % len(req):i % len(req) + 1])
                except OSError: pass
            i += 1; last = time.time()
        t = time.time()
        try:
            h = http.client.HTTPConnection('127.0.0.1', port, timeout=5); h.request('GET', '/health')
            ok = h.getresponse().status == 200; h.close()
        except Exception: ok = False
        if ok: lat.append(time.time() - t)
        else: fails += 1
        time.sleep(0.1)
    for c in conns: c.close()
    stop(p, 5)
    lat.sort()
    return len(lat), fails, (statistics.median(lat) * 1000 if lat else None), (lat[-1] * 1000 if lat else None)

def sigterm_trickle(binary):
    p, port = start(binary, '-t', '1')
    s = socket.create_connection(('127.0.0.1', port)); flag = [True]
    def trickle():
        req = b'GET /health HTTP/1.1\r\nHost: x\r\n'; i = 0
        while flag[0]:
            try: s.send(req[i % len(req):i % len(req) + 1])
            except OSError: return
            i += 1; time.sleep(0.5)
    th = threading.Thread(target=trickle); th.start(); time.sleep(1)
    took = stop(p, 30); flag[0] = False; th.join(); s.close()
    return took

def form(path):
    b = uuid.uuid4().hex
    data = open(path, 'rb').read()
    body = (b'--' + b.encode() + b'\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\n' + data +
            b'\r\n--' + b.encode() + b'\r\nContent-Disposition: form-data; name="response_format"\r\n\r\ntext\r\n--' + b.encode() + b'--\r\n')
    return body, 'multipart/form-data; boundary=' + b

def throughput(binary, clients=32, per_client=10):
    p, port = start(binary, '--sessions', '2', '-t', '1', '--max-waiting', '64')
    bodies = [form(c) for c in CLIPS]
    ok = [0]; bad = [0]; lock = threading.Lock()
    def client(k):
        for j in range(per_client):
            body, ctype = bodies[(k + j) % len(bodies)]
            try:
                h = http.client.HTTPConnection('127.0.0.1', port, timeout=120)
                h.request('POST', '/v1/audio/transcriptions', body, {'Content-Type': ctype})
                r = h.getresponse(); r.read(); h.close(); good = r.status == 200
            except Exception: good = False
            with lock:
                if good: ok[0] += 1
                else: bad[0] += 1
    t0 = time.time()
    ths = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in ths: t.start()
    for t in ths: t.join()
    wall = time.time() - t0; stop(p, 10)
    return ok[0], bad[0], ok[0] / wall

which = sys.argv[3] if len(sys.argv) > 3 else 'all'
for name, b in (('old', sys.argv[1]), ('new', sys.argv[2])):
    if which in ('all', 'bomb'): print(name, 'header bomb (MB sent, RSS base, peak, held):', header_bomb(b), flush=True)
    if which in ('all', 'slow'): print(name, '/health under 64 slow clients (ok, failed, p50 ms, max ms):', health_under_slow(b), flush=True)
    if which in ('all', 'term'): print(name, 'SIGTERM with a trickling client (s):', sigterm_trickle(b), flush=True)
if which in ('all', 'rps'):
    for rnd in range(2):
        for name, b in (('old', sys.argv[1]), ('new', sys.argv[2])):
            print(name, 'round', rnd, '32 clients x 10 (ok, failed, req/s):', throughput(b), flush=True)
