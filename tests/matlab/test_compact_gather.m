function test_compact_gather()
%TEST_COMPACT_GATHER  maxunpool_backward from compact indices, dZ(indx) where indx is the window-local argmax:
% windows whose cells pair up along the first dimension (2 cells of stride 2 there; 2x2, 2x3, 2x2x2) go by whole
% vectors of the windows' cells, the rest one output at a time. Every case against Octave's own dZ(I), with I the
% linear indices of the same maxpool call, compared bit for bit (-0 and NaN in dZ are copied as they are): single
% and double, several batch shapes (rows split between threads), with fresh and with retained memory (outputs
% aligned or not), a bad tap at the start, middle and end of a vector of eight; and the shapes the vectors do not
% take. pkmex('pair_gathers') counts the calls done by vectors: each case checks it took the route it should.
randn('seed', 11);
cases = {
  % size of dZ, format, poolsize, stride, by vectors
  [32 20 3 5],  'SSCB',  [2 2],   [2 2],   true;
  [16 8 1],     'SSCB',  [2 2],   [2 2],   true;
  [32 9 2 3],   'SSCB',  [2 3],   [2 3],   true;
  [16 4 6 2 3], 'SSSCB', [2 2 2], [2 2 2], true;
  [17 8 2 2],   'SSCB',  [2 2],   [2 2],   true;   % (the last row of dZ in no window)
  [12 8 2 2],   'SSCB',  [2 2],   [2 2],   false;  % 6 outputs along the first dimension
  [16 8 2 2],   'SSCB',  [1 2],   [1 2],   false;  % one cell along it
  [32 8 2 2],   'SSCB',  [2 2],   [1 2],   false;  % windows overlapping along it
  [24 24 2 2],  'SSCB',  [3 3],   [3 3],   false;  % nine cells
};
for retained = [false true]
  poolkit.retain_memory(retained);
  for cls = {'single', 'double'}
    for k = 1:size(cases, 1)
      [sz, fmt, ps, st, vectors] = cases{k, :};
      o = {'Stride', st, 'DataFormat', fmt};
      X = cast(randn(sz), cls{1});
      [~, I] = poolkit.maxpool(X, ps, o{:});
      [~, Ic, info] = poolkit.maxpool(X, ps, o{:}, 'Indices', 'compact');
      check(isa(Ic, 'uint8'), 'compact taps of %s are %s', mat2str(ps), class(Ic));
      dZ = cast(randn(sz), cls{1});
      dZ(I(1)) = -0;
      dZ(I(end)) = NaN;
      what = sprintf('%s [%s] %s, retained %d', cls{1}, num2str(sz), mat2str(ps), retained);
      before = poolkit.pkmex('pair_gathers');
      check(isequal(bits(poolkit.maxunpool_backward(dZ, Ic, info)), bits(dZ(I))), 'dZ(indx), %s', what);
      check(poolkit.pkmex('pair_gathers') - before == vectors, '%s: by vectors %d, expected %d', what, ...
            poolkit.pkmex('pair_gathers') - before, vectors);
      for at = [1, 12, numel(Ic)]  % (the first vector's first lane, the second's fourth, the last output)
        bad = Ic;
        bad(at) = prod(ps);  % (taps count from 0: one past the last cell)
        try
          poolkit.maxunpool_backward(dZ, bad, info);
          check(false, 'a tap out of its window was not refused (%s, entry %d)', what, at);
        catch err
          check(strcmp(err.identifier, 'poolkit:badIndex') && ~isempty(strfind(err.message, 'indx')), ...
                'bad tap: %s (%s)', err.message, err.identifier);
        end
      end
    end
  end
end
poolkit.retain_memory(false);
end

function b = bits(a)
if isa(a, 'single'), b = typecast(a(:), 'uint32'); else, b = typecast(a(:), 'uint64'); end
end
