<?php
// Checks a captured Guard delivery: a file of "Name: value" header lines and a file of the raw
// body, against one or more secrets. Exit 0 when genuine, 1 when refused, 2 for a usage or
// configuration mistake.
//
//   php verify.php [--now=SECONDS] guard-signature|standard-webhooks HEADERS BODY SECRET...

declare(strict_types=1);

require __DIR__ . '/GuardWebhook.php';

use GuardWebhook\ConfigurationError;
use GuardWebhook\VerificationError;
use GuardWebhook\Verifier;

$usage = 'php verify.php [--now=SECONDS] guard-signature|standard-webhooks HEADERS BODY SECRET...';
$args = array_slice($argv, 1);
$now = null;
if (isset($args[0]) && str_starts_with($args[0], '--now=')) {
    $now = (float) substr(array_shift($args), strlen('--now='));
}
if (count($args) < 4 || !in_array($args[0], ['guard-signature', 'standard-webhooks'], true)) {
    fwrite(STDERR, $usage . "\n");
    exit(2);
}
[$scheme, $headersFile, $bodyFile] = $args;
$secrets = array_slice($args, 3);
$headers = [];
foreach (file($headersFile, FILE_IGNORE_NEW_LINES) as $line) {
    $colon = strpos($line, ':');
    if ($colon !== false) {
        $headers[strtolower(trim(substr($line, 0, $colon)))] = trim(substr($line, $colon + 1));
    }
}
// Leave out the other scheme's headers, so constructEvent checks the one asked for.
$drop = $scheme === 'standard-webhooks' ? ['guard-signature'] : ['webhook-signature', 'webhook-id', 'webhook-timestamp'];
foreach ($drop as $name) {
    unset($headers[$name]);
}
$body = file_get_contents($bodyFile);
try {
    $event = (new Verifier($secrets, Verifier::DEFAULT_TOLERANCE_SECONDS, $now))->constructEvent($body, $headers);
} catch (VerificationError $e) {
    fwrite(STDERR, "refused ({$e->reason}): {$e->getMessage()}\n");
    exit(1);
} catch (ConfigurationError $e) {
    fwrite(STDERR, "configuration: {$e->getMessage()}\n");
    exit(2);
}
$data = $event['data'] ?? [];
echo "verified by {$scheme}: {$event['event_type']} " . ($data['signal_id'] ?? $data['event_id'] ?? '') . "\n";
