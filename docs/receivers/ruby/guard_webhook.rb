# Verify Guard webhooks with Ruby's standard library alone (Ruby 3.0 or later: openssl, json, time).
#
# Two signatures come with every delivery, made with the same endpoint secret (docs/webhooks.md):
#
#   Guard-Signature: sha256=<hex HMAC-SHA256(key = the secret's UTF-8 text, message = raw body)>
#   webhook-id, webhook-timestamp, webhook-signature: v1,<base64 HMAC-SHA256(
#       key = the bytes the secret's text after "whsec_" decodes to,
#       message = "<webhook-id>.<webhook-timestamp>.<raw body>")>   (Standard Webhooks)
#
# During a secret rotation each signature header lists one entry per valid secret, newest first
# (`sha256=<hex>, sha256=<hex>`; `v1,<b64> v1,<b64>`): a delivery is genuine when any entry
# matches. Every method takes a list of secrets too, for your own rollover: any one may match.
#
# Copy this file into your project. Run it as a script to check a captured delivery:
#
#   ruby guard_webhook.rb [--now=SECONDS] guard-signature|standard-webhooks HEADERS BODY SECRET...

require 'json'
require 'openssl'
require 'time'

module GuardWebhook
  DEFAULT_TOLERANCE_SECONDS = 300
  # Most entries read from one signature header: a forged header cannot make us do unbounded work.
  MAX_SIGNATURE_ENTRIES = 8
  SECRET_PREFIX = 'whsec_'

  # The request is not to be trusted: answer it with a 4xx.
  class VerificationError < StandardError
    attr_reader :code

    def initialize(code, message)
      super(message)
      @code = code
    end
  end

  # The receiver's own mistake (no secret, a secret that is not base64): a 5xx, fix it.
  class ConfigurationError < StandardError; end

  module_function

  def secrets_list(secrets)
    list = Array(secrets)
    if list.empty? || !list.all? { |s| s.is_a?(String) && !s.empty? }
      raise ConfigurationError, "the webhook secret is unset or empty: an empty key accepts anyone's signature"
    end
    list
  end

  def equal_digests?(want, got)
    want.bytesize == got.bytesize && OpenSSL.fixed_length_secure_compare(want, got)
  end

  # Checks Guard-Signature (one entry, or a rotation's list) against the raw body.
  def verify_guard_signature(body, header, secrets)
    keys = secrets_list(secrets)
    raise VerificationError.new('missing_signature', 'the Guard-Signature header is missing') if header.nil? || header.empty?

    entries = header.split(',').map(&:strip).reject(&:empty?)
    if entries.length > MAX_SIGNATURE_ENTRIES
      raise VerificationError.new('malformed_signature', 'the Guard-Signature header has too many entries')
    end

    got = entries.select { |e| e.start_with?('sha256=') }.map do |entry|
      hex = entry.delete_prefix('sha256=')
      raise VerificationError.new('malformed_signature', 'a sha256= entry is not 64 hex digits') unless hex.match?(/\A\h{64}\z/)

      [hex].pack('H*')
    end
    raise VerificationError.new('malformed_signature', 'the Guard-Signature header has no "sha256=" entry') if got.empty?

    keys.each do |key|
      want = OpenSSL::HMAC.digest('SHA256', key.b, body.b)
      return true if got.any? { |entry| equal_digests?(want, entry) }
    end
    raise VerificationError.new('signature_mismatch', 'the Guard-Signature does not match the body and secret')
  end

  # The Standard Webhooks key: the text after "whsec_", base64-decoded. Secrets are issued in
  # standard base64; earlier ones were base64url: either alphabet, padding optional.
  def standard_key(secret)
    text = secret.delete_prefix(SECRET_PREFIX).sub(/=+\z/, '').tr('-_', '+/')
    key = begin
      (text + ('=' * (-text.length % 4))).unpack1('m0')
    rescue ArgumentError
      ''
    end
    raise ConfigurationError, 'the webhook secret is not whsec_ followed by base64' if key.empty?

    key
  end

  def check_time(seconds, now, tolerance, what)
    if seconds < now - tolerance
      raise VerificationError.new('timestamp_too_old', "#{what} is more than #{tolerance} s old (a replay?)")
    end
    return unless seconds > now + tolerance

    raise VerificationError.new('timestamp_in_future', "#{what} is more than #{tolerance} s ahead (check the clock)")
  end

  # Checks the Standard Webhooks headers against the raw body, the timestamp within tolerance.
  def verify_standard_webhooks(body, id, timestamp, signature, secrets, now: Time.now.to_f,
                               tolerance: DEFAULT_TOLERANCE_SECONDS)
    keys = secrets_list(secrets).map { |s| standard_key(s) }
    raise VerificationError.new('missing_signature', 'the webhook-signature header is missing') if signature.nil? || signature.empty?
    if id.nil? || id.empty? || timestamp.nil? || timestamp.empty?
      raise VerificationError.new('missing_signature', 'the webhook-id or webhook-timestamp header is missing')
    end
    unless timestamp.match?(/\A\d{1,12}\z/)
      raise VerificationError.new('malformed_signature', 'the webhook-timestamp header is not integer seconds')
    end

    check_time(timestamp.to_i, now, tolerance, 'the webhook-timestamp')
    entries = signature.split(' ').reject(&:empty?)
    if entries.length > MAX_SIGNATURE_ENTRIES
      raise VerificationError.new('malformed_signature', 'the webhook-signature header has too many entries')
    end

    got = entries.select { |e| e.start_with?('v1,') }.map do |entry|
      entry.delete_prefix('v1,').unpack1('m0')
    rescue ArgumentError
      raise VerificationError.new('malformed_signature', 'a v1, entry is not base64')
    end
    raise VerificationError.new('malformed_signature', 'the webhook-signature header has no "v1," entry') if got.empty?

    content = "#{id}.#{timestamp}.".b + body.b
    keys.each do |key|
      want = OpenSSL::HMAC.digest('SHA256', key, content)
      return true if got.any? { |entry| equal_digests?(want, entry) }
    end
    raise VerificationError.new('signature_mismatch',
                                'the webhook-signature does not match the id, timestamp, body and secret')
  end

  # The headers construct_event reads, from a Rack env (Rails: request.env; Sinatra: env).
  def rack_headers(env)
    %w[guard-signature webhook-id webhook-timestamp webhook-signature].to_h do |name|
      [name, env["HTTP_#{name.upcase.tr('-', '_')}"]]
    end.compact
  end

  # Verifies one delivery and returns its envelope (a Hash). `body` is the raw request body;
  # `headers` maps lower-case header names to values. Guard-Signature is checked when present,
  # else the Standard Webhooks headers; then the envelope's signed `timestamp` must be within
  # `tolerance` seconds of now, so a captured request cannot be replayed later.
  def construct_event(body, headers, secrets, now: Time.now.to_f, tolerance: DEFAULT_TOLERANCE_SECONDS)
    guard = headers['guard-signature']
    if guard.nil? && !headers['webhook-signature'].nil?
      verify_standard_webhooks(body, headers['webhook-id'], headers['webhook-timestamp'], headers['webhook-signature'],
                               secrets, now: now, tolerance: tolerance)
    else
      verify_guard_signature(body, guard, secrets)
    end
    begin
      event = JSON.parse(body)
      sent = Time.iso8601(event.fetch('timestamp')).to_f
    rescue JSON::ParserError, ArgumentError, KeyError, TypeError, NoMethodError
      raise VerificationError.new('invalid_payload', 'the body is not a Guard envelope with a timestamp')
    end
    raise VerificationError.new('invalid_payload', 'the envelope is not version v1') unless event['version'] == 'v1'

    check_time(sent, now, tolerance, "the envelope's timestamp")
    event
  end
end

if $PROGRAM_NAME == __FILE__
  usage = 'ruby guard_webhook.rb [--now=SECONDS] guard-signature|standard-webhooks HEADERS BODY SECRET...'
  args = ARGV.dup
  now = args.first&.start_with?('--now=') ? Float(args.shift.delete_prefix('--now=')) : Time.now.to_f
  unless args.length >= 4 && %w[guard-signature standard-webhooks].include?(args[0])
    warn usage
    exit 2
  end
  scheme, headers_file, body_file, *secrets = args
  headers = {}
  File.foreach(headers_file, encoding: 'UTF-8') do |line|
    name, sep, value = line.partition(':')
    headers[name.strip.downcase] = value.strip unless sep.empty?
  end
  # Leave out the other scheme's headers, so construct_event checks the one asked for.
  drop = scheme == 'standard-webhooks' ? %w[guard-signature] : %w[webhook-signature webhook-id webhook-timestamp]
  drop.each { |name| headers.delete(name) }
  body = File.binread(body_file)
  begin
    event = GuardWebhook.construct_event(body, headers, secrets, now: now)
  rescue GuardWebhook::VerificationError => e
    warn "refused (#{e.code}): #{e.message}"
    exit 1
  rescue GuardWebhook::ConfigurationError => e
    warn "configuration: #{e.message}"
    exit 2
  end
  data = event['data'] || {}
  puts "verified by #{scheme}: #{event['event_type']} #{data['signal_id'] || data['event_id']}"
end
