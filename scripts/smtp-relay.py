#!/usr/bin/python3
"""A real SMTP relay for the test cluster (Debian's python3-aiosmtpd): STARTTLS required before
AUTH (PLAIN or LOGIN, one user), and every accepted message written to a Maildir, so tests read
what a tenant would have received.

  smtp-relay.py --port P --maildir DIR --cert CRT --key KEY --user U --password-file F
"""
import argparse
import asyncio
import mailbox
import signal
import ssl

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class MaildirHandler:
    def __init__(self, path):
        self.box = mailbox.Maildir(path, create=True)

    async def handle_DATA(self, server, session, envelope):
        msg = mailbox.MaildirMessage(envelope.original_content)
        msg['X-Envelope-To'] = ', '.join(envelope.rcpt_tos)
        msg['X-Envelope-From'] = envelope.mail_from
        self.box.add(msg)
        return '250 OK'


def authenticator(user, password):
    def check(server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and auth_data.login.decode() == user and auth_data.password.decode() == password
        return AuthResult(success=ok, handled=False)
    return check


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--port', type=int, required=True)
    p.add_argument('--maildir', required=True)
    p.add_argument('--cert', required=True)
    p.add_argument('--key', required=True)
    p.add_argument('--user', required=True)
    p.add_argument('--password-file', required=True)
    a = p.parse_args()
    with open(a.password_file) as f:
        password = f.read().strip()
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(a.cert, a.key)
    controller = Controller(
        MaildirHandler(a.maildir),
        hostname='127.0.0.1',
        port=a.port,
        tls_context=tls,
        require_starttls=True,
        auth_required=True,
        auth_require_tls=True,
        authenticator=authenticator(a.user, password),
    )
    controller.start()
    loop = asyncio.new_event_loop()
    stop = loop.create_future()
    for s in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(s, lambda: stop.done() or stop.set_result(None))
    print(f'smtp relay on 127.0.0.1:{a.port}, mail to {a.maildir}', flush=True)
    loop.run_until_complete(stop)
    controller.stop()


if __name__ == '__main__':
    main()
