function test_entries_agree()
%TEST_ENTRIES_AGREE  Octave's native entry (pkmex.oct, which the +poolkit functions call) and the MEX entry
% (pkmex_mex.mex, the same source through the MEX API, as MATLAB builds it) give the same outputs and the same
% errors; and maxunpool's compact indices give what its linear indices give, with windows apart, overlapping and
% padded (the first is routed by poolkit's max_pool_backward, the others by their own scatter).
randn('seed', 3);
X = randn(7, 9, 3, 2);
f = {'DataFormat', 'SSCB'};
geoms = {{[2 2], 'Stride', 2}, {[3 2], 'Stride', [1 2]}, {[2 3], 'Stride', 2, 'Padding', 1}, {1:2}};
for g = 1:numel(geoms)
  o = [geoms{g}(2:end), f];
  p = geoms{g}{1};
  for cls = {'double', 'single'}
    A = cast(X, cls{1});
    [Y, I] = poolkit.pkmex('maxpool', A, p, o{:});
    [~, Ic] = poolkit.pkmex('maxpool', A, p, o{:}, 'Indices', 'compact');
    s = size(A);
    calls = {{'maxpool', A, p, o{:}}, {'maxpool', A, p, o{:}, 'Indices', 'compact'}, {'avgpool', A, p, o{:}}, ...
             {'avgpool_backward', Y, s, p, o{:}}, {'maxunpool', Y, I, s}, {'maxunpool', Y, Ic, s, p, o{:}}, ...
             {'maxpool_backward', Y, I, s}, {'maxpool_backward', Y, Ic, s, p, o{:}}, ...
             {'maxunpool_backward', A, I}, {'maxunpool_backward', A, Ic, p, o{:}}};
    for k = 1:numel(calls)
      c = calls{k};
      [a1, a2] = deal([]);
      [b1, b2] = deal([]);
      if k <= 2
        [a1, a2] = poolkit.pkmex(c{:});
        [b1, b2] = poolkit.pkmex_mex(c{:});
      else
        a1 = poolkit.pkmex(c{:});
        b1 = poolkit.pkmex_mex(c{:});
      end
      check(isequal(a1, b1) && isequal(a2, b2) && strcmp(class(a1), class(b1)) && isequal(size(a1), size(b1)), ...
            'geometry %d, %s: %s differs between pkmex.oct and pkmex_mex.mex', g, cls{1}, c{1});
    end
    check(isequal(poolkit.pkmex('maxunpool', Y, Ic, s, p, o{:}), poolkit.pkmex('maxunpool', Y, I, s)), ...
          'geometry %d, %s: maxunpool with compact indices differs from linear', g, cls{1});
  end
end
% a scalar, and a scalar output
check(isequal(poolkit.pkmex('maxpool', single(5), 1, 'DataFormat', 'SC'), single(5)), 'a scalar');
% the same error identifier and message from both entries (Octave's MEX layer puts the MEX file's name first)
bads = {{'maxpool', X, 2}, {'maxunpool', Y, I + numel(X), size(X)}, {'maxunpool', Y, Ic + 9, size(X), p, f{:}}, ...
        {'maxpool', int8(X), 2, f{:}}, {'nothing'}};
for k = 1:numel(bads)
  [id1, m1] = caught(@poolkit.pkmex, bads{k});
  [id2, m2] = caught(@poolkit.pkmex_mex, bads{k});
  check(~isempty(id1) && strcmp(id1, id2) && strcmp(m1, regexprep(m2, '^pkmex_mex: ', '')), 'bad call %d: "%s" / "%s"', k, m1, m2);
end
end

function [id, msg] = caught(fn, args)
id = ''; msg = '';
try
  fn(args{:});
catch err
  id = err.identifier; msg = err.message;
end
end
