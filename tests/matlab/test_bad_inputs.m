function test_bad_inputs()
%TEST_BAD_INPUTS  Each bad input raises a MATLAB error with its identifier and a message naming the argument;
% none crashes or writes out of bounds.
X = rand(4, 4, 2, 3);
f = {'DataFormat', 'SSCB'};
[Y, I, s] = poolkit.maxpool(X, 2, 'Stride', 2, f{:});
[~, Ic, info] = poolkit.maxpool(X, 2, 'Stride', 2, f{:}, 'Indices', 'compact');
bad = 'poolkit:badInput';
cases = {
  bad, 'X', @() poolkit.maxpool(int8(X), 2, f{:});
  bad, 'X', @() poolkit.maxpool(uint8(X), 2, f{:});
  bad, 'X', @() poolkit.avgpool(int32(X), 2, f{:});
  bad, 'X', @() poolkit.maxpool(X > 0.5, 2, f{:});
  bad, 'X', @() poolkit.maxpool(complex(X, X), 2, f{:});
  bad, 'X', @() poolkit.maxpool(sparse(rand(4)), 2, 'DataFormat', 'SS');
  bad, 'X', @() poolkit.maxpool(zeros(0, 4), 2, 'DataFormat', 'SS');
  bad, 'X', @() poolkit.avgpool(zeros(4, 0, 2), 2, 'DataFormat', 'SSC');
  bad, 'DataFormat', @() poolkit.maxpool(X, 2);
  bad, 'DataFormat', @() poolkit.maxpool(X, 2, 'DataFormat', 'SSXB');
  bad, 'DataFormat', @() poolkit.maxpool(X, 2, 'DataFormat', 'SSC');
  bad, 'DataFormat', @() poolkit.maxpool(X, 2, 'DataFormat', 'CCSB');
  bad, 'DataFormat', @() poolkit.maxpool(X, 2, 'DataFormat', 'CBTU');
  bad, 'DataFormat', @() poolkit.maxpool(rand(2, 3, 2, 3, 2), 2, 'DataFormat', 'CSBSU');
  bad, 'PoolFormat', @() poolkit.maxpool(X, 2, f{:}, 'PoolFormat', 'C');
  bad, 'foo', @() poolkit.maxpool(X, 2, f{:}, 'Foo', 1);
  bad, 'name-value', @() poolkit.maxpool(X, 2, 'Stride');
  bad, 'poolsize', @() poolkit.maxpool(X, 0, f{:});
  bad, 'poolsize', @() poolkit.maxpool(X, [2 2 2], f{:});
  bad, 'poolsize', @() poolkit.maxpool(X, 1.5, f{:});
  bad, 'poolsize', @() poolkit.maxpool(X, 'globl', f{:});
  bad, 'poolsize', @() poolkit.maxpool(X, 5, f{:});
  bad, 'Stride', @() poolkit.maxpool(X, 2, f{:}, 'Stride', 0);
  bad, 'Stride', @() poolkit.maxpool(X, 2, f{:}, 'Stride', NaN);
  bad, 'Padding', @() poolkit.maxpool(X, 2, f{:}, 'Padding', -1);
  bad, 'Padding', @() poolkit.maxpool(X, 2, f{:}, 'Padding', 'valid');
  bad, 'Padding', @() poolkit.maxpool(X, 2, f{:}, 'Padding', [1 1 1]);
  bad, 'Padding', @() poolkit.maxpool(X, 2, f{:}, 'Padding', 2);
  bad, 'Stride, Padding', @() poolkit.maxpool(X, 'global', f{:}, 'Stride', 2);
  bad, 'Indices', @() poolkit.maxpool(X, 2, f{:}, 'Indices', 'flat');
  bad, 'PaddingValue', @() poolkit.avgpool(X, 2, f{:}, 'PaddingValue', 2);
  bad, 'paddingvalue', @() poolkit.maxpool(X, 2, f{:}, 'PaddingValue', 0);
  bad, 'indx', @() poolkit.maxunpool(Y, single(I), s);
  bad, 'indx', @() poolkit.maxunpool(Y, I(1:end-1), s);
  'poolkit:badIndex', 'indx', @() poolkit.maxunpool(Y, I + numel(X), s);
  'poolkit:badIndex', 'indx', @() poolkit.maxunpool(Y, I - 0.5, s);
  'poolkit:badIndex', 'indx', @() poolkit.maxunpool(Y, 0 * I, s);
  'poolkit:badIndex', 'indx', @() poolkit.maxpool_backward(Y, I + numel(X), s);
  'poolkit:badIndex', 'indx', @() poolkit.maxunpool_backward(X, I + numel(X));
  'poolkit:badIndex', 'indx', @() poolkit.maxunpool(Y, max(I - 0.5, 1.5), s);  % in range, not whole
  'poolkit:badIndex', 'indx', @() poolkit.maxpool_backward(Y, max(I - 0.5, 1.5), s);
  'poolkit:badIndex', 'indx', @() poolkit.maxunpool_backward(X, max(I - 0.5, 1.5));
  'poolkit:badIndex', 'indx', @() poolkit.maxunpool(Y, nudged(I, 6), s);  % one entry not whole, inside its batch
  'poolkit:badIndex', 'indx', @() poolkit.maxpool_backward(Y, nudged(I, 6), s);
  bad, 'outputSize', @() poolkit.maxunpool(Y, I, [4 -4 2 3]);
  bad, 'inputSize', @() poolkit.maxpool_backward(Y, Ic, setfield(info, 'InputSize', [0 4 2 3]));
  bad, 'indx', @() poolkit.maxunpool(Y, int16(Ic), info);
  bad, 'indx', @() poolkit.maxunpool(Y(:, :, :, 1:2), Ic(:, :, :, 1:2), info);
  'poolkit:badIndex', 'indx', @() poolkit.maxunpool(Y, Ic + 4, info);
  'poolkit:badIndex', 'indx', @() poolkit.maxunpool_backward(X, Ic + 4, info);
  'poolkit:badIndex', 'indx', @() poolkit.maxunpool(Y, 0 * Ic + 4, info);  % every tap one past the window's last
  'poolkit:badIndex', 'indx', @() poolkit.maxunpool_backward(X, 0 * Ic + 4, info);
  'poolkit:badIndex', 'indx', @() poolkit.maxpool_backward(Y, Ic + 4, info);
  bad, 'dY', @() poolkit.maxpool_backward(Y(:, :, :, 1:2), Ic, info);
  bad, 'dY', @() poolkit.avgpool_backward(Y(:, :, :, 1:2), size(X), 2, 'Stride', 2, f{:});
  bad, 'dY', @() poolkit.avgpool_backward(int8(Y), size(X), 2, 'Stride', 2, f{:});
  bad, 'dZ', @() poolkit.maxunpool_backward(complex(X, X), I);
};
% A compact tap that lands in the padding: window (1,1) of a padded pooling has its first row in the padding.
[~, Ip, infop] = poolkit.maxpool(X, 2, 'Stride', 2, 'Padding', 1, f{:}, 'Indices', 'compact');
Ip(1) = 0;
cases(end + 1, :) = {'poolkit:badIndex', 'indx', @() poolkit.maxunpool(zeros(size(Ip)), Ip, infop)};
for k = 1:size(cases, 1)
  [id, arg, fn] = cases{k, :};
  try
    fn();
    raised = false;
  catch err
    raised = true;
    check(strcmp(err.identifier, id), 'case %d (%s): identifier %s, expected %s (%s)', k, arg, err.identifier, ...
          id, err.message);
    check(~isempty(strfind(lower(err.message), lower(arg))), 'case %d: message "%s" does not name %s', k, ...
          err.message, arg);
  end
  check(raised, 'case %d (%s): no error raised', k, arg);
end
end

function J = nudged(I, k)
% I with entry k half a cell lower: in range, inside its batch's part of X, not a whole number.
J = I;
J(k) = J(k) - 0.5;
end
