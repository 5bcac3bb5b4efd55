function test_retain_memory()
%TEST_RETAIN_MEMORY  poolkit.retain_memory(true) makes a loop's outputs reuse freed pages: repeated maxpool calls
% whose large output is freed each time fault (almost) no new pages, where glibc's default maps each output
% afresh; the values are the same either way; bad flags raise poolkit:badInput naming tf. Linux only (the fault
% count is /proc/self/stat's minflt).
cleanup = onCleanup(@() poolkit.retain_memory(false));
% Y: 38.8 MiB, above the largest block (32 MiB) that glibc's default ever keeps after a free; X made without
% temporaries of that size.
X = repmat(single(magic(64)), [1 1 2 1280]);
o = {'Stride', 1, 'DataFormat', 'SSCB'};
expected = poolkit.maxpool(X, [2 2], o{:});
faults = zeros(1, 2);
modes = [false, true];
for m = 1:2
  poolkit.retain_memory(modes(m));
  for r = 1:3, Y = poolkit.maxpool(X, [2 2], o{:}); end  % warm-up: the retained heap grows once
  f0 = minor_faults();
  for r = 1:10
    Y = poolkit.maxpool(X, [2 2], o{:});
    check(isequal(Y, expected), 'retain_memory(%d): maxpool gave other values', modes(m));
  end
  faults(m) = (minor_faults() - f0) / 10;
  clear Y;
end
% A fresh output of 38.8 MiB is 19 faults or more (2 MiB huge pages; 4 KiB pages would be about 10,000).
check(faults(1) >= 10, 'default: %.1f faults per call; expected each output mapped afresh', faults(1));
% Retained, each output reuses the pages the one before it freed: no new page (a 4 KiB page or two allowed).
check(faults(2) <= 2, 'retained: %.1f faults per call (%.1f by default); expected the freed pages reused', ...
      faults(2), faults(1));
for bad_tf = {'yes', [true true], 2, -1, 0.5, {true}}
  try
    poolkit.retain_memory(bad_tf{1});
    raised = false;
  catch err
    raised = true;
    check(strcmp(err.identifier, 'poolkit:badInput'), 'identifier %s (%s)', err.identifier, err.message);
    check(~isempty(strfind(err.message, 'tf')), 'message "%s" does not name tf', err.message);
  end
  check(raised, 'retain_memory accepted a bad flag');
end
end

function n = minor_faults()
s = fileread('/proc/self/stat');
f = strsplit(strtrim(s(find(s == ')', 1, 'last') + 2:end)), ' ');
n = str2double(f{8});  % stat's field 10, minflt, counted after the command name's ')'
end
