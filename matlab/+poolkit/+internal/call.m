function out = call(op, args)
%CALL  The MEX on args, where the struct maxpool returns as its third output with 'Indices','compact' stands for
%   its InputSize, PoolSize and options.
for k = 1:numel(args)
  if isstruct(args{k}) && isfield(args{k}, 'PoolSize')
    s = args{k};
    args = [args(1:k-1), {s.InputSize, s.PoolSize}, s.Options, args(k+1:end)];
    break;
  end
end
out = poolkit.pkmex(op, args{:});
end
