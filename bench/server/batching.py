# Requests per second of tern-server under many concurrent clients, for several server
# configurations in one run (rounds alternate the configurations, so the machine's noise
# falls on all of them alike):
#   python3 bench/server/batching.py SERVER_BIN MODEL_DIR CLIP.wav [--clients 32]
#       [--per-client 2] [--max-tokens 32] [--rounds 2]
# Configurations: the session pool without batching (2 sessions x 1 thread, and 1 session x
# 2 threads, each decoding one request at a time) and one session of 2 threads decoding up
# to 16 requests together (--max-batch 16). Each client posts CLIP --per-client times, one
# after the other, with max_tokens fixed so that every request costs the same on a
# synthetic model (whose text is random). Loopback only.
import argparse, http.client, statistics, subprocess, threading, time, uuid

CONFIGS = {
    'pool 2x1': ['--sessions', '2', '-t', '1', '--max-batch', '1'],
    'pool 1x2': ['--sessions', '1', '-t', '2', '--max-batch', '1'],
    'batch 16': ['--sessions', '1', '-t', '2', '--max-batch', '16'],
}


def start(binary, model, extra):
    p = subprocess.Popen([binary, '--model', model, '--port', '0', '--quiet', '--max-waiting',
                          '256', *extra], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True)
    line = p.stdout.readline()
    return p, int(line.split('127.0.0.1:')[1].split()[0])


def form(path, max_tokens):
    b = uuid.uuid4().hex.encode()
    parts = [(b'file', open(path, 'rb').read(), b'; filename="clip.wav"'),
             (b'response_format', b'json', b''), (b'max_tokens', str(max_tokens).encode(), b'')]
    body = b''
    for name, value, extra in parts:
        body += (b'--' + b + b'\r\nContent-Disposition: form-data; name="' + name + b'"' + extra +
                 b'\r\n\r\n' + value + b'\r\n')
    return body + b'--' + b + b'--\r\n', 'multipart/form-data; boundary=' + b.decode()


def run(binary, model, extra, body, ctype, clients, per_client):
    p, port = start(binary, model, extra)
    ok, bad, lat = [0], [0], []
    lock = threading.Lock()

    def client():
        for _ in range(per_client):
            t = time.time()
            try:
                h = http.client.HTTPConnection('127.0.0.1', port, timeout=600)
                h.request('POST', '/v1/audio/transcriptions', body, {'Content-Type': ctype})
                r = h.getresponse()
                r.read()
                h.close()
                good = r.status == 200
            except OSError:
                good = False
            with lock:
                (ok if good else bad)[0] += 1
                lat.append(time.time() - t)

    t0 = time.time()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.time() - t0
    p.terminate()
    p.wait(30)
    return ok[0], bad[0], ok[0] / wall, statistics.median(lat)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('server')
    ap.add_argument('model')
    ap.add_argument('clip')
    ap.add_argument('--clients', type=int, default=32)
    ap.add_argument('--per-client', type=int, default=2)
    ap.add_argument('--max-tokens', type=int, default=32)
    ap.add_argument('--rounds', type=int, default=2)
    a = ap.parse_args()
    body, ctype = form(a.clip, a.max_tokens)
    rps = {name: [] for name in CONFIGS}
    for rnd in range(a.rounds):
        for name, extra in CONFIGS.items():
            ok, bad, r, med = run(a.server, a.model, extra, body, ctype, a.clients, a.per_client)
            rps[name].append(r)
            print(f'round {rnd} {name}: {ok} ok, {bad} failed, {r:.2f} req/s, '
                  f'median latency {med:.1f} s', flush=True)
    base = max(statistics.median(rps['pool 2x1']), statistics.median(rps['pool 1x2']))
    for name, v in rps.items():
        print(f'{name}: median {statistics.median(v):.2f} req/s, '
              f'{statistics.median(v) / base:.2f}x the better session pool', flush=True)


if __name__ == '__main__':
    main()
