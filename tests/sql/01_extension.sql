-- Extension install, version, device_info, settings.
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_mln;
SELECT plan(13);

SELECT is(mln.version(), '0.17.0', 'mln.version() reports the library version');
SELECT ok(mln.device_info() ? 'backend', 'device_info names the backend');
SELECT ok(mln.device_info()->>'backend' IN ('cpu', 'cuda'), 'backend is cpu or cuda');
SELECT is((SELECT boot_val FROM pg_settings WHERE name = 'mln.device'), 'auto', 'mln.device defaults to auto');

SET mln.device = 'cpu';
SELECT is(mln.device_info()->>'backend', 'cpu', 'mln.device = cpu selects the CPU backend');
RESET mln.device;

SELECT throws_ok($$SET mln.device = 'tpu'$$, '22023', NULL, 'an unknown device is rejected');
SELECT throws_ok($$SET mln.no_such_setting = 1$$, '42602', NULL, 'the mln. prefix is reserved');

-- 'gpu' without a usable GPU is a clear error; with one, it works.
SELECT CASE WHEN (mln.device_info()->>'device_count')::int > 0
  THEN lives_ok($$SET mln.device = 'gpu'; SELECT mln.device_info()$$, 'gpu works where a GPU exists')
  ELSE throws_like($$SET LOCAL mln.device = 'gpu'; SELECT mln.device_info()$$, '%no GPU is usable%',
                   'device gpu without a GPU is a clear error') END;
RESET mln.device;
SELECT has_function('mln', 'ground', ARRAY['text', 'text', 'boolean', 'text[]'], 'mln.ground exists');

-- Background GPU initialisation (the command line calls it before its evidence COPY).
SELECT is(mln.device_warmup('cpu'), false, 'device_warmup(cpu) starts nothing');
SELECT throws_ok($$SELECT mln.device_warmup('tpu')$$, '22023', NULL, 'device_warmup rejects an unknown device');
SELECT lives_ok($$SELECT mln.device_warmup()$$, 'device_warmup() returns without a usable GPU too');
SELECT ok(mln.device_info()->>'backend' IN ('cpu', 'cuda'), 'the engine is usable after a warm-up');

SELECT * FROM finish();
ROLLBACK;
